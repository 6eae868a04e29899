/// The WebSocket protocol engine of one connection after its opening handshake, for either role, with no I/O: facts
/// in, actions out (in the style of async-http-client's `HTTP1ConnectionStateMachine`).
///
/// The owner tells it what happened (`bytesReceived`, `send`, `sendPing`, `close`, `consumerHolds`,
/// `writeRoomAvailable`, `closeTimerFired`, `reset`, `streamEnded`) and then runs what `nextAction` returns until it
/// returns nil: deliver a message (borrowed, valid only inside the call), write bytes (sealing: the last write),
/// pause or resume reading, wait for write room, arm the close timer, close or reset the stream, report the end.
///
/// Every rule both roles share is written once, here:
/// - pings are answered automatically (unless `automaticPongs` is off); the pong is written at once while the write
///   queue is empty, and otherwise coalesced: RFC 6455 §5.5.3 lets an endpoint answer only the most recent ping, so
///   a flood costs one pong per batch of frames, not one per ping;
/// - a close frame from the peer is echoed with its code (§5.5.1); a protocol violation sends a close frame with the
///   violation's code (1002, 1007, 1009); either way, after every message that came before it was delivered, the
///   stream is closed gracefully, and reset if that flush takes longer than the close timeout;
/// - after our own close frame nothing more is sent (it seals the output), and the peer has the close timeout to
///   answer before the stream is reset;
/// - the outbound watermarks: above `high` bytes waiting for the socket, reading stops (and a sender is told to
///   wait) until the queue is down to `low`;
/// - the ids of our pings (8 bytes, big-endian) are remembered until their pong arrives; those still outstanding at
///   the end are reported as failed.
///
/// - permessage-deflate, when negotiated (`Configuration.compression`): a data message at or above the threshold
///   is compressed with RSV1 on its first frame, control frames never; a message from the peer marked RSV1 is
///   inflated before it is lent, in 16 KiB steps that stop the moment it would pass `maximumMessageSize` (1009), so
///   a small frame that inflates to gigabytes costs at most one message's worth of memory; data that does not
///   inflate is a 1007, and RSV1 anywhere but on a data message's first frame a 1002. zlib's state is allocated on
///   first use and freed when the stream ends.
public struct WebSocketConnection {
    /// The engine's fixed settings.
    public struct Configuration: Sendable {
        /// This endpoint's role (a client masks what it sends and expects unmasked frames).
        public var role: Role
        /// The largest message (and frame) accepted from the peer; larger is a 1009. At least 125 bytes are always
        /// accepted for a frame, so that control frames fit.
        public var maximumMessageSize: Int
        /// Answer pings without the owner; off, the owner answers with `pong(_:)` and `.deliver` lends the ping.
        public var automaticPongs: Bool
        /// The write queue's levels: above `high` reading stops and senders wait, until it is down to `low`.
        public var outbound: Watermarks
        /// How long the peer has to answer our close frame, and how long the final flush may take, in milliseconds.
        public var closeTimeoutMilliseconds: Int
        /// permessage-deflate as the handshake negotiated it; nil (no compression): RSV1 from the peer is a 1002.
        /// With compression, `maximumMessageSize` bounds a message inflated, and as received with room for what
        /// compression adds to data that does not compress (`WebSocketCompression.largestCompressedSize(ofMessage:)`).
        public var compression: WebSocketCompression?
        /// The largest payload of a data frame we send; a longer message is fragmented (default: never).
        public var fragmentSize: Int

        public init(
            role: Role, maximumMessageSize: Int = 16 << 20, automaticPongs: Bool = true,
            outbound: Watermarks = .standard, closeTimeoutMilliseconds: Int = 5_000,
            compression: WebSocketCompression? = nil, fragmentSize: Int = .max
        ) {
            self.role = role
            self.maximumMessageSize = max(0, maximumMessageSize)
            self.automaticPongs = automaticPongs
            self.outbound = outbound
            self.closeTimeoutMilliseconds = closeTimeoutMilliseconds
            self.compression = compression
            self.fragmentSize = max(1, fragmentSize)
        }
    }

    /// Where the connection is. The data of each state lives in its case.
    public enum State: Equatable, Sendable {
        /// Both directions are open.
        case open(Open)
        /// Our close frame is in the output (or written); the peer's answer is awaited. Messages from the peer are
        /// still delivered; nothing more is sent.
        case closing(Closing)
        /// The protocol is over (closing handshake, violation, timeout or reset); the stream is being let go.
        case finishing(Finishing)
        /// The stream has ended.
        case ended(Ending)
    }

    public struct Open: Equatable, Sendable {
        /// The payload of the latest ping not answered yet (automatic pongs).
        public var owedPong: [UInt8]?
        /// Our pings not answered yet, oldest first.
        public var outstandingPings: [UInt64]
    }

    public struct Closing: Equatable, Sendable {
        /// The code of our close frame.
        public var sentCode: UInt16?
        public var outstandingPings: [UInt64]
    }

    public struct Finishing: Equatable, Sendable {
        /// What `.ended` reports once the stream has ended.
        public var ending: Ending
        /// Our pings that will never be answered.
        public var failedPings: [UInt64]
    }

    public typealias Closure = WebSocketClosure
    public typealias Ending = WebSocketEnding

    /// Bytes to write: lent (valid only inside the call), or an output grown past the capacity the engine keeps
    /// (4 MiB: a large echo), given whole so that a writer can queue the array itself instead of copying it.
    public enum Output {
        case borrowed(UnsafeRawBufferPointer)
        case owned([UInt8])
    }

    /// What the owner does next.
    public enum Action {
        /// A text or binary message, or a ping or pong frame (`opcode` says which), borrowed for the call.
        case deliver(BorrowedMessage)
        /// The pong for our ping `id` arrived (each id at most once).
        case pongReceived(id: UInt64)
        /// A pong answering the peer's ping (automatic pongs) was encoded into the output, which is written next.
        case pongSent(payload: [UInt8])
        /// Write these bytes; `seals`: they end with our close frame, the last write.
        case write(Output, seals: Bool)
        case pauseReading
        case resumeReading
        /// Tell the engine `writeRoomAvailable()` once at most `atMost` bytes wait to be written.
        case awaitWriteRoom(atMost: Int)
        /// (Re)arm the close timer: `closeTimerFired()` after this many milliseconds.
        case armCloseTimer(milliseconds: Int)
        /// The closing handshake completed (or the peer broke the protocol); nothing more is delivered.
        case closed(Closure)
        /// Flush what is queued, then end the stream gracefully (FIN, or TLS close_notify then FIN).
        case closeStream
        /// Drop the stream (RST); what is queued is discarded.
        case resetStream
        /// The stream has ended: the last action. `failedPings`: our pings that were never answered.
        case ended(Ending, failedPings: [UInt64])
    }

    /// What `encodeMessage` decided.
    public enum SendDecision: Equatable {
        /// The frame, ready to write.
        case frame([UInt8])
        /// The write queue is over the high watermark: wait until it is down to `atMost`, then send again.
        case waitForRoom(atMost: Int)
        /// Not open: our close frame went out, or the connection is over. Nothing was encoded.
        case notOpen
    }

    private enum Pending {
        case write
        case pongReceived(UInt64)
        case pongSent([UInt8])
        case pauseReading
        case resumeReading
        case awaitWriteRoom
        case armCloseTimer
        case closed(Closure)
        case closeStream
        case resetStream
        case ended(Ending, failedPings: [UInt64])
    }

    /// Whether reading runs: it stops while the consumer holds it or while the write queue waits for room.
    private struct Reading {
        var consumerHolds = false
        var waitingForWriteRoom = false
        /// What the owner was last told.
        var paused = false
        var wantsPause: Bool { self.consumerHolds || self.waitingForWriteRoom }
    }

    public let configuration: Configuration
    public private(set) var state: State = .open(Open(owedPong: nil, outstandingPings: []))
    /// The id of the latest of our pings whose pong has been decoded (nil before the first): a pong the owner may not
    /// have handled yet, for a heartbeat asking what arrived (`inboundFrames`).
    package private(set) var latestPongReceived: UInt64?
    /// This side's role.
    public var role: Role { self.configuration.role }

    private var decoder: WebSocketDecoder
    private var encoder: WebSocketEncoder<MaskingKeySource>
    /// This connection's zlib contexts (permessage-deflate negotiated), fresh with each engine.
    private let deflate: Deflate?
    /// The last inflated message, lent until new bytes arrive (an echo sends it back); its buffer is kept for the next
    /// one unless it grew past `retainedOutputCapacity`.
    private var inflated: [UInt8] = []
    /// The last message lent was `inflated` (what an echo sends back).
    private var lastLentInflated = false
    /// The most bytes one message has inflated to (a probe: a bomb stops one byte past the limit).
    package private(set) var largestInflatedCount = 0
    private var output: [UInt8] = []
    /// The output ends with our close frame.
    private var outputSeals = false
    private var reading = Reading()
    /// Actions decided by facts, in order, before any more frames are decoded.
    private var pending: [Pending] = []
    private var pendingHead = 0
    /// The output buffer's capacity is kept up to this size between writes.
    private static var retainedOutputCapacity: Int { 4 << 20 }

    /// - Parameter random: where a client's masking keys come from (the system CSPRNG unless a test fixes them).
    public init(_ configuration: Configuration, random: some RandomNumberGenerator = SystemRandomNumberGenerator()) {
        self.configuration = configuration
        let limit = configuration.maximumMessageSize
        // A compressed message may be longer on the wire than inflated (data that does not compress): it is bounded
        // as received with room for that, and inflated to `limit` at most.
        let received = configuration.compression == nil
            ? limit : WebSocketCompression.largestCompressedSize(ofMessage: limit)
        self.decoder = WebSocketDecoder(
            role: configuration.role, maximumFrameSize: max(125, received), maximumMessageSize: limit,
            reservedBitsAllowed: configuration.compression == nil ? 0 : Deflate.compressedBit,
            maximumTransformedMessageSize: received)
        self.encoder = WebSocketEncoder(
            role: configuration.role, fragmentSize: configuration.fragmentSize, random: MaskingKeySource(random))
        self.deflate = configuration.compression.map { Deflate($0, role: configuration.role) }
    }

    /// One connection's permessage-deflate contexts; zlib's state inside each is allocated on first use.
    private struct Deflate {
        /// RSV1, "Per-Message Compressed" (RFC 7692 §6).
        static var compressedBit: UInt8 { 0b100 }
        let compressor: DeflateCompressor
        let decompressor: DeflateDecompressor
        let threshold: Int

        init(_ compression: WebSocketCompression, role: Role) {
            let sending = compression.parameters.sending(as: role)
            let receiving = compression.parameters.receiving(as: role)
            self.compressor = DeflateCompressor(
                windowBits: sending.windowBits, memoryLevel: compression.memoryLevel,
                noContextTakeover: sending.noContextTakeover)
            self.decompressor = DeflateDecompressor(
                windowBits: receiving.windowBits, noContextTakeover: receiving.noContextTakeover)
            self.threshold = compression.threshold
        }

        func compresses(_ size: Int, _ choice: MessageCompression) -> Bool {
            switch choice {
            case .automatic: size >= self.threshold
            case .always: true
            case .never: false
            }
        }

        /// Inflates one whole compressed message into `output` (emptied first); nil when it is all there.
        func inflate(
            _ message: BorrowedMessage, into output: inout [UInt8], maximumSize: Int
        ) -> ProtocolError? {
            output.removeAll(keepingCapacity: true)
            do throws(CompressionError) {
                try self.decompressor.inflate(message.payload, appendingTo: &output, maximumSize: maximumSize)
                try self.decompressor.finishMessage(appendingTo: &output, maximumSize: maximumSize)
            } catch {
                switch error {
                case .invalidData: return ProtocolError(.invalidCompressedData)
                case .tooLarge(let limit): return ProtocolError(.messageTooBig(limit: limit))
                case .outOfMemory: return ProtocolError(.inflaterUnavailable)
                }
            }
            if message.opcode == .text, !UTF8Validator.isValid(output) { return ProtocolError(.invalidUTF8) }
            return nil
        }

        /// Frees both contexts (the connection is over).
        func release() {
            self.compressor.release()
            self.decompressor.release()
        }
    }

    /// Whether zlib's state is allocated for compressing and for inflating (it is from first use until the end).
    package var compressionContextsAllocated: (compressor: Bool, decompressor: Bool) {
        (self.deflate?.compressor.isAllocated ?? false, self.deflate?.decompressor.isAllocated ?? false)
    }

    /// Bytes received and not yet delivered: the frames in the parser's buffer and the fragments of the message
    /// being assembled. At most one message of `maximumMessageSize` plus what one read appended.
    public var bufferedInboundBytes: Int { self.decoder.bufferedByteCount }

    /// The frames received so far, for a heartbeat that tells a busy link from a dead one: how many arrived whole
    /// (control frames and fragments included), and whether part of the next one has arrived (its header or some
    /// of its payload) and the rest has not. Exact once the owner has run the actions of the last bytes received
    /// (every whole frame is then decoded, unless the consumer holds delivery).
    package var inboundFrames: (completed: Int, inProgress: Bool) {
        (self.decoder.framesCompleted, self.decoder.hasBufferedFrameBytes)
    }

    /// Bytes encoded and not yet handed to the owner to write.
    public var outputByteCount: Int { self.output.count }

    /// Whether messages may still be sent: the one answer for every sender.
    public var isOpen: Bool {
        if case .open = self.state { return true }
        return false
    }

    // MARK: - Facts

    /// Bytes read from the stream. Ignored once the protocol is over.
    public mutating func bytesReceived(_ bytes: UnsafeRawBufferPointer) {
        guard self.readsFrames else { return }
        self.forgetLastInflated()
        self.decoder.append(bytes)
    }

    /// New bytes end the lending of the last message (as the decoder's do): a very large inflated buffer goes too.
    private mutating func forgetLastInflated() {
        self.lastLentInflated = false
        if self.inflated.capacity > Self.retainedOutputCapacity { self.inflated = [] }
    }

    /// Bytes read from the stream (for example what followed the handshake in the same read).
    public mutating func bytesReceived(_ bytes: some Sequence<UInt8>) {
        guard self.readsFrames else { return }
        self.forgetLastInflated()
        self.decoder.append(bytes)
    }

    /// A text or binary message to send, appended to the output; false (nothing appended) unless open.
    /// `compression` matters only when permessage-deflate was negotiated.
    @discardableResult
    public mutating func send(
        _ opcode: Opcode, payload: UnsafeRawBufferPointer, compression: MessageCompression = .automatic
    ) -> Bool {
        guard self.isOpen else { return false }
        Self.encodeMessage(
            opcode, payload: payload, compression: compression, deflate: self.deflate, with: &self.encoder,
            into: &self.output)
        return true
    }

    /// A message its sender compressed already (raw DEFLATE without the `00 00 ff ff` tail), sent as one frame with
    /// RSV1 set whatever it inflates to: how a test peer sends a crafted message such as `DeflateBomb`'s. False
    /// (nothing appended) unless open with permessage-deflate negotiated.
    @discardableResult
    package mutating func sendPrecompressed(_ opcode: Opcode, deflated payload: [UInt8]) -> Bool {
        guard self.isOpen, self.deflate != nil else { return false }
        precondition(opcode == .text || opcode == .binary, "messages are text or binary")
        self.encoder.encode(opcode, payload: payload, reservedBits: Deflate.compressedBit, into: &self.output)
        return true
    }

    /// A message to send as its own frame, for a sender that writes it itself (on its own thread, outside the
    /// owner's loop). With `queuedWriteBytes` over the high watermark, the sender is told to wait (pass nil after the
    /// wait: it sends then).
    ///
    /// The bytes returned start with whatever the engine had encoded and not yet handed out (an owner's pong, a
    /// batch the loop has not written yet), so that written as they come, in the order of these calls, the wire
    /// carries every frame in the order it was encoded: with permessage-deflate's context takeover, the order the
    /// peer must inflate them in.
    public mutating func encodeMessage(
        _ opcode: Opcode, payload: UnsafeRawBufferPointer, queuedWriteBytes: Int?,
        compression: MessageCompression = .automatic
    ) -> SendDecision {
        guard self.isOpen else { return .notOpen }
        if let queued = queuedWriteBytes, queued > self.configuration.outbound.high {
            return .waitForRoom(atMost: self.configuration.outbound.low)
        }
        var frame: [UInt8] = []
        frame.reserveCapacity(self.output.count + payload.count + 14)
        if !self.output.isEmpty {
            // While open the output never holds our close frame (it ends `open`): nothing here seals.
            frame.append(contentsOf: self.output)
            self.output.removeAll(keepingCapacity: self.output.capacity <= Self.retainedOutputCapacity)
        }
        Self.encodeMessage(
            opcode, payload: payload, compression: compression, deflate: self.deflate, with: &self.encoder,
            into: &frame)
        return .frame(frame)
    }

    /// Sends the message the last `.deliver` lent (text or binary) back as our own, without copying it out of the
    /// receive buffer first: an echo. False unless open and the last delivery was a data message.
    @discardableResult
    public mutating func echoLastMessage() -> Bool {
        guard self.isOpen else { return false }
        // A copy of the decoder value (or of the inflated buffer) shares its storage: it lends the payload while the
        // encoder and the output, other stored properties, are written.
        let decoder = self.decoder
        let inflated = self.lastLentInflated ? self.inflated : nil
        let echoed = decoder.withLastMessage { message -> Bool in
            guard message.opcode == .text || message.opcode == .binary else { return false }
            guard let inflated else {
                Self.encodeMessage(
                    message.opcode, payload: message.payload, compression: .automatic, deflate: self.deflate,
                    with: &self.encoder, into: &self.output)
                return true
            }
            inflated.withUnsafeBytes {
                Self.encodeMessage(
                    message.opcode, payload: $0, compression: .automatic, deflate: self.deflate, with: &self.encoder,
                    into: &self.output)
            }
            return true
        }
        guard echoed == true else { return false }
        return true
    }

    /// Our ping with `id` (its 8-byte big-endian payload), remembered until its pong; false (nothing sent, the
    /// ping failed) unless open.
    @discardableResult
    public mutating func sendPing(id: UInt64) -> Bool {
        guard case .open(var open) = self.state else { return false }
        withUnsafeBytes(of: id.bigEndian) { self.encodeControl(.ping, payload: $0) }
        // The state lets go of its copy first, so the append finds the array unique and grows it in place (shared,
        // it was copied at every ping: an allocation per heartbeat cycle).
        self.state = .open(Open(owedPong: nil, outstandingPings: []))
        open.outstandingPings.append(id)
        self.state = .open(open)
        return true
    }

    /// A ping with any payload (at most 125 bytes), not tracked by id; false unless open.
    /// - Throws: `WireUsageError` when the payload is over 125 bytes.
    @discardableResult
    public mutating func ping(_ payload: some Collection<UInt8>) throws(WireUsageError) -> Bool {
        guard self.isOpen else { return false }
        try self.encoder.ping(payload, into: &self.output)
        return true
    }

    /// A pong the owner sends itself (without automatic pongs); false unless open.
    /// - Throws: `WireUsageError` when the payload is over 125 bytes.
    @discardableResult
    public mutating func pong(_ payload: some Collection<UInt8>) throws(WireUsageError) -> Bool {
        guard self.isOpen else { return false }
        try self.encoder.pong(payload, into: &self.output)
        return true
    }

    /// Starts the closing handshake: our close frame (after a pong still owed) seals the output, and the close timer
    /// starts once it is written.
    /// - Parameters:
    ///   - code: a code valid on the wire; any other is sent as 1000.
    ///   - reason: cut to 123 bytes of UTF-8 at a character boundary.
    /// - Returns: false (nothing sent) unless open.
    @discardableResult
    public mutating func close(code: UInt16, reason: String) -> Bool {
        guard case .open(let open) = self.state else { return false }
        let code = CloseCode.isValidOnWire(code) ? code : 1000
        self.queueClose(code: code, reason: Self.truncated(reason, toUTF8Count: 123))
        self.state = .closing(Closing(sentCode: code, outstandingPings: open.outstandingPings))
        self.pending.append(contentsOf: [.write, .armCloseTimer])
        return true
    }

    /// The consumer of delivered messages is behind (`held`) or has caught up: delivery and reading stop or go on.
    /// A hold that comes during a delivery stops the next one: the rest waits in the engine.
    public mutating func consumerHolds(_ held: Bool) {
        self.reading.consumerHolds = held
        self.updateReading()
    }

    /// The write queue is down to the level `.awaitWriteRoom` named.
    public mutating func writeRoomAvailable() {
        self.reading.waitingForWriteRoom = false
        self.updateReading()
    }

    /// The close timer fired: the peer did not answer our close frame in time, or the final flush stalled.
    public mutating func closeTimerFired() {
        switch self.state {
        case .closing(let closing):
            self.state = .finishing(Finishing(ending: .closeTimedOut, failedPings: closing.outstandingPings))
            self.pending.append(.resetStream)
        case .finishing:
            self.pending.append(.resetStream)  // the peer does not read our last bytes
        case .open, .ended:
            break  // the timer lost a race with the end (or a new timer replaced it)
        }
    }

    /// The owner gives up on the connection: the stream is reset.
    public mutating func reset() {
        switch self.state {
        case .open(let open):
            self.state = .finishing(Finishing(ending: .reset, failedPings: open.outstandingPings))
        case .closing(let closing):
            self.state = .finishing(Finishing(ending: .reset, failedPings: closing.outstandingPings))
        case .finishing, .ended:
            break
        }
        if !self.isEnded { self.pending.append(.resetStream) }
    }

    /// The stream has ended (whoever ended it): `.ended` is the last action.
    public mutating func streamEnded() {
        let ending: Ending
        let failed: [UInt64]
        switch self.state {
        case .open(let open):
            (ending, failed) = (.streamEnded(afterOurClose: false), open.outstandingPings)
        case .closing(let closing):
            (ending, failed) = (.streamEnded(afterOurClose: true), closing.outstandingPings)
        case .finishing(let finishing):
            (ending, failed) = (finishing.ending, finishing.failedPings)
        case .ended:
            return
        }
        self.state = .ended(ending)
        self.output = []
        self.inflated = []
        self.lastLentInflated = false
        self.deflate?.release()
        self.pending.append(.ended(ending, failedPings: failed))
    }

    // MARK: - Actions

    /// The next action, lent to `body` (a delivered message and written bytes are valid only inside it); false when
    /// nothing is to be done until the next fact.
    /// - Parameter queuedWriteBytes: the bytes waiting to be written to the socket now (the write queue's level).
    public mutating func nextAction(queuedWriteBytes: Int, _ body: (Action) -> Void) -> Bool {
        while true {
            if self.pendingHead < self.pending.count {
                let next = self.pending[self.pendingHead]
                self.pendingHead += 1
                if self.pendingHead == self.pending.count {
                    self.pending.removeAll(keepingCapacity: true)
                    self.pendingHead = 0
                }
                if self.run(next, body) { return true }
                continue
            }
            if self.readsFrames, !self.reading.waitingForWriteRoom,
               queuedWriteBytes > self.configuration.outbound.high {
                self.reading.waitingForWriteRoom = true
                self.pending.append(.awaitWriteRoom)
                self.updateReading()
                continue
            }
            switch self.decodeNext(queuedWriteBytes: queuedWriteBytes, body) {
            case .lent:
                return true
            case .handled:
                continue
            case .none:
                guard self.hasOutput else { return false }
                self.pending.append(.write)  // the end of a batch: what it owes goes out together
            }
        }
    }

    /// The next action, lent to `body`, and what `body` returned; nil when nothing is to be done until the next fact.
    public mutating func nextAction<Result>(queuedWriteBytes: Int, _ body: (Action) -> Result) -> Result? {
        var result: Result?
        guard self.nextAction(queuedWriteBytes: queuedWriteBytes, { result = body($0) }) else { return nil }
        return result
    }

    private mutating func run(_ pending: Pending, _ body: (Action) -> Void) -> Bool {
        // Once the stream has ended, only what reports (not what acts on the stream) is still run.
        let action: Action
        switch pending {
        case .write:
            guard !self.isEnded else { return false }
            return self.lendOutput(body)
        case .pongReceived(let id): action = .pongReceived(id: id)
        case .pongSent(let payload): action = .pongSent(payload: payload)
        case .closed(let closure): action = .closed(closure)
        case .ended(let ending, let failedPings): action = .ended(ending, failedPings: failedPings)
        case .pauseReading where !self.isEnded: action = .pauseReading
        case .resumeReading where !self.isEnded: action = .resumeReading
        case .awaitWriteRoom where !self.isEnded: action = .awaitWriteRoom(atMost: self.configuration.outbound.low)
        case .armCloseTimer where !self.isEnded:
            action = .armCloseTimer(milliseconds: self.configuration.closeTimeoutMilliseconds)
        case .closeStream where !self.isEnded: action = .closeStream
        case .resetStream where !self.isEnded: action = .resetStream
        case .pauseReading, .resumeReading, .awaitWriteRoom, .armCloseTimer, .closeStream, .resetStream:
            return false
        }
        body(action)
        return true
    }

    private enum Decoded {
        /// A message was lent.
        case lent
        /// A frame the engine handled itself (a close frame, a violation): its actions are pending.
        case handled
        /// More bytes are needed, delivery is held, or the protocol is over.
        case none
    }

    /// Decodes the next message and lends it, handling what the engine answers itself (pings, close frames,
    /// violations).
    private mutating func decodeNext(queuedWriteBytes: Int, _ body: (Action) -> Void) -> Decoded {
        guard self.readsFrames, !self.reading.consumerHolds else { return .none }
        // The decoder lends the message while it is being mutated, so the closure touches no other state of this
        // value: it notes what to change, and the change happens once the decoder has returned.
        // A compressed message is inflated into `inflated` (moved out meanwhile) before it is lent.
        var inflated: [UInt8] = []
        swap(&inflated, &self.inflated)
        defer {
            self.largestInflatedCount = max(self.largestInflatedCount, inflated.count)
            swap(&inflated, &self.inflated)
        }
        let deflate = self.deflate
        let limit = self.configuration.maximumMessageSize
        var inflateFailure: ProtocolError?
        var lentInflated = false
        let answersPings: Bool
        if case .open = self.state { answersPings = self.configuration.automaticPongs } else { answersPings = false }
        var ping: [UInt8]?
        var pong: UInt64?
        var closeFrame: (code: UInt16?, reason: String)?
        var lent = false
        do throws(ProtocolError) {
            let found: Void? = try self.decoder.nextMessage { message in
                switch message.opcode {
                case .close:
                    closeFrame = (message.closeCode, String(decoding: message.closeReason, as: UTF8.self))
                    return
                case .ping where answersPings:
                    ping = Array(message.payload)
                case .pong where message.payload.count == 8:
                    pong = UInt64(bigEndian: message.payload.loadUnaligned(as: UInt64.self))
                default:
                    break
                }
                guard message.reservedBits & Deflate.compressedBit != 0, let deflate else {
                    body(.deliver(message))
                    lent = true
                    return
                }
                // Only data messages get here: the decoder refuses RSV1 anywhere else.
                if let failure = deflate.inflate(message, into: &inflated, maximumSize: limit) {
                    inflateFailure = failure
                    return
                }
                lentInflated = true
                inflated.withUnsafeBytes {
                    // RSV1 stays set: the receiver can tell that the message came compressed.
                    body(.deliver(BorrowedMessage(
                        opcode: message.opcode, payload: $0, reservedBits: message.reservedBits)))
                }
                lent = true
            }
            guard found != nil else { return .none }
            if let inflateFailure { throw inflateFailure }
        } catch {
            self.violated(error)
            return .handled
        }
        self.lastLentInflated = lentInflated
        if let ping, case .open(var open) = self.state {
            open.owedPong = ping  // only the latest unanswered ping needs its pong (§5.5.3)
            self.state = .open(open)
            // Answered at once while the kernel takes everything; with a backlog, at the end of the batch.
            if queuedWriteBytes == 0, !self.reading.waitingForWriteRoom { self.pending.append(.write) }
        }
        if let pong { self.pongArrived(pong) }
        if let closeFrame {
            self.peerClosed(code: closeFrame.code, reason: closeFrame.reason)
            return .handled
        }
        precondition(lent, "every frame but a close frame is lent")
        return .lent
    }

    private mutating func pongArrived(_ id: UInt64) {
        switch self.state {
        case .open(var open):
            guard let index = open.outstandingPings.firstIndex(of: id) else { return }  // unsolicited or repeated
            self.state = .open(Open(owedPong: nil, outstandingPings: []))  // as in `sendPing`: removed in place
            open.outstandingPings.remove(at: index)
            self.state = .open(open)
        case .closing(var closing):
            guard let index = closing.outstandingPings.firstIndex(of: id) else { return }
            closing.outstandingPings.remove(at: index)
            self.state = .closing(closing)
        case .finishing, .ended:
            return
        }
        self.latestPongReceived = id
        self.pending.append(.pongReceived(id))
    }

    private mutating func peerClosed(code: UInt16?, reason: String) {
        switch self.state {
        case .open(let open):
            // §5.5.1: answer with a close frame echoing the status code (none if there was none).
            self.queueClose(code: code, reason: "")
            self.finish(.byPeer(code: code, reason: reason), failedPings: open.outstandingPings)
        case .closing(let closing):
            let closure = Closure.byUs(sentCode: closing.sentCode, answeredCode: code, answeredReason: reason)
            self.finish(closure, failedPings: closing.outstandingPings)
        case .finishing, .ended:
            preconditionFailure("no frame is decoded once the protocol is over")
        }
    }

    private mutating func violated(_ error: ProtocolError) {
        switch self.state {
        case .open(let open):
            self.queueClose(code: error.closeCode, reason: error.reason)
            self.finish(.violation(error, sentClose: true), failedPings: open.outstandingPings)
        case .closing(let closing):
            // Our close frame is already out: nothing more may be sent.
            self.finish(.violation(error, sentClose: false), failedPings: closing.outstandingPings)
        case .finishing, .ended:
            preconditionFailure("no frame is decoded once the protocol is over")
        }
    }

    /// The protocol is over: the last bytes go out, then the stream closes, within the close timeout.
    private mutating func finish(_ closure: Closure, failedPings: [UInt64]) {
        self.state = .finishing(Finishing(ending: .closed(closure), failedPings: failedPings))
        self.pending.append(contentsOf: [.closed(closure), .write, .closeStream, .armCloseTimer])
    }

    // MARK: - Output

    private var hasOutput: Bool {
        if !self.output.isEmpty { return true }
        if case .open(let open) = self.state, open.owedPong != nil { return true }
        return false
    }

    private mutating func lendOutput(_ body: (Action) -> Void) -> Bool {
        self.takeOutput { output, seals in body(.write(output, seals: seals)) }
    }

    /// Lends (or gives) the bytes waiting to be written, a pong still owed encoded first, for a writer on another
    /// thread than the owner's loop (after `sendPing`): `seals`, they end with our close frame. False when there is
    /// nothing to write.
    public mutating func takeOutput(_ body: (_ output: Output, _ seals: Bool) -> Void) -> Bool {
        guard !self.isEnded else { return false }
        self.encodeOwedPong()
        guard !self.output.isEmpty else { return false }
        let seals = self.outputSeals
        guard self.output.capacity > Self.retainedOutputCapacity else {
            self.output.withUnsafeBytes { body(.borrowed($0), seals) }
            self.output.removeAll(keepingCapacity: true)
            return true
        }
        let given = self.output
        self.output = []
        body(.owned(given), seals)
        return true
    }

    private mutating func encodeOwedPong() {
        guard case .open(var open) = self.state, let payload = open.owedPong else { return }
        open.owedPong = nil
        self.state = .open(open)
        self.encodeControl(.pong, payload: payload)
        self.pending.append(.pongSent(payload))
    }

    /// Where every data message is encoded: compressed (RSV1 on its first frame) when permessage-deflate was
    /// negotiated and `compression` asks for it. Should zlib fail to allocate its state, the message goes out as
    /// it is (RSV1 is per message, so the peer reads it either way).
    private static func encodeMessage(
        _ opcode: Opcode, payload: UnsafeRawBufferPointer, compression: MessageCompression, deflate: Deflate?,
        with encoder: inout WebSocketEncoder<MaskingKeySource>, into buffer: inout [UInt8]
    ) {
        precondition(opcode == .text || opcode == .binary, "messages are text or binary; use ping, pong or close")
        if let deflate, deflate.compresses(payload.count, compression) {
            var compressed: [UInt8] = []
            do throws(CompressionError) {
                try deflate.compressor.compress(payload, appendingTo: &compressed)
                encoder.encode(opcode, payload: compressed, reservedBits: Deflate.compressedBit, into: &buffer)
                return
            } catch {
                // outOfMemory, the one error compressing can have: sent uncompressed below.
            }
        }
        encoder.encode(opcode, payload: payload, into: &buffer)
    }

    private mutating func encodeControl(_ opcode: Opcode, payload: some Collection<UInt8>) {
        do {
            if opcode == .ping {
                try self.encoder.ping(payload, into: &self.output)
            } else {
                try self.encoder.pong(payload, into: &self.output)
            }
        } catch {
            preconditionFailure("payloads here (8 bytes, or a ping's checked by the decoder) fit a control frame")
        }
    }

    private mutating func queueClose(code: UInt16?, reason: String) {
        self.encodeOwedPong()
        do {
            try self.encoder.close(code: code, reason: reason, into: &self.output)
        } catch {
            preconditionFailure("close codes here are valid on the wire and reasons fit: \(error)")
        }
        self.outputSeals = true
    }

    // MARK: - Reading

    /// Whether frames are still read and decoded: while open, and while closing (the peer's answer).
    private var readsFrames: Bool {
        switch self.state {
        case .open, .closing: true
        case .finishing, .ended: false
        }
    }

    private var isEnded: Bool {
        if case .ended = self.state { return true }
        return false
    }

    private mutating func updateReading() {
        guard !self.isEnded, self.reading.wantsPause != self.reading.paused else { return }
        self.reading.paused = self.reading.wantsPause
        self.pending.append(self.reading.paused ? .pauseReading : .resumeReading)
    }

    /// `text` cut at a character boundary so that its UTF-8 form has at most `limit` bytes.
    public static func truncated(_ text: String, toUTF8Count limit: Int) -> String {
        guard text.utf8.count > limit else { return text }
        var count = 0
        var result = ""
        for character in text {
            count += character.utf8.count
            guard count <= limit else { break }
            result.append(character)
        }
        return result
    }
}

/// The engine's one masking-key type, whatever generator a caller supplies: the engine is not generic, so that the
/// code a driver in another module calls is compiled for its types (a generic engine ran unspecialized there and
/// looked its nested types' metadata up at run time on every action: 15 % more CPU per 64-byte round trip).
struct MaskingKeySource: RandomNumberGenerator {
    private var generator: any RandomNumberGenerator

    init(_ generator: some RandomNumberGenerator) {
        self.generator = generator
    }

    mutating func next() -> UInt64 {
        self.generator.next()
    }
}

/// How the closing handshake ended.
public enum WebSocketClosure: Equatable, Sendable {
    /// The peer closed first with `code` (nil: no status) and `reason`; our echo is in the output.
    case byPeer(code: UInt16?, reason: String)
    /// We closed first with `sentCode` and the peer answered with `answeredCode` and `answeredReason`.
    case byUs(sentCode: UInt16?, answeredCode: UInt16?, answeredReason: String)
    /// The peer broke the protocol. `sentClose`: it happened while open, and a close frame with the error's code
    /// is in the output; otherwise our close frame was already out.
    case violation(ProtocolError, sentClose: Bool)
}

/// How the connection ended, reported with `.ended` once the stream has ended.
public enum WebSocketEnding: Equatable, Sendable {
    /// After the closing handshake or a violation (reported with `.closed` when it happened).
    case closed(WebSocketClosure)
    /// We closed and the peer did not answer within the close timeout: the stream was reset.
    case closeTimedOut
    /// The stream ended before any closing handshake completed; `afterOurClose`: our close frame was out.
    case streamEnded(afterOurClose: Bool)
    /// The owner reset the stream (`reset()`).
    case reset
}

