/// One WebSocket connection after its opening handshake, for either role, with no I/O (in the spirit of wsproto's
/// `Connection`): bytes in with `receive(_:)`, events out with `nextEvent(_:)`; the frames this side owes the peer
/// (pongs, close frames, and whatever the owner sends through it) accumulate in an output buffer that the owner
/// writes to its socket with `drainOutput(_:)`.
///
/// It holds the rules both roles share, so that the client transport and the test server are only I/O around it:
/// - pings are answered automatically (unless `automaticPongs` is off), and the pongs owed are coalesced: RFC 6455
///   §5.5.3 lets an endpoint answer only the most recent ping it has not answered yet, so a flood of pings costs
///   one pong per `drainOutput`, not one per ping;
/// - a close frame from the peer is echoed with its status code (§5.5.1) and ends the connection; a close frame
///   answering ours completes the closing handshake;
/// - a protocol violation sends a close frame with the violation's code (1002, 1007, 1009) and ends the connection,
///   after every message that arrived before it was delivered;
/// - nothing is sent after our close frame, which is the last bytes of the output (`outputSeals`).
///
/// Flow control is the owner's: `bufferedInboundBytes` and the size of the output tell it when to stop reading its
/// socket (docs/ARCHITECTURE.md §10).
public struct WebSocketConnection<Random: RandomNumberGenerator> {
    /// Where the connection is. The data of each state lives in its case.
    public enum State: Equatable, Sendable {
        /// Both directions are open.
        case open
        /// Our close frame is in the output (or written); the peer's answer is awaited. Messages from the peer are
        /// still delivered; nothing more is sent.
        case closing(sentCode: UInt16?)
        /// The connection is over: nothing more is read or sent (a close frame may still be in the output).
        case closed(Closure)
    }

    /// How the connection ended.
    public enum Closure: Equatable, Sendable {
        /// The peer closed first with `code` (nil: no status) and `reason`; our echo is in the output.
        case byPeer(code: UInt16?, reason: String)
        /// We closed first with `sentCode` and the peer answered with `answeredCode` and `answeredReason`.
        case byUs(sentCode: UInt16?, answeredCode: UInt16?, answeredReason: String)
        /// The peer broke the protocol. When this happened while open, a close frame with the error's code is in the
        /// output; while closing, our close frame was already out.
        case violation(ProtocolError)
    }

    /// What `nextEvent(_:)` lends.
    public enum Event {
        /// A whole text or binary message, or a ping or pong frame (`opcode` says which). The payload is valid only
        /// inside the closure. A ping's pong is already owed when pongs are automatic.
        case received(BorrowedMessage)
        /// The connection ended (the state is now `.closed`); no event follows.
        case closed(Closure)
    }

    /// This side's role.
    public var role: Role { self.decoder.role }
    public private(set) var state = State.open
    /// Whether pings are answered without the owner (default); off, the owner answers with `pong(_:)`.
    public let automaticPongs: Bool
    /// True once the output holds our close frame: write it as the connection's last write.
    public private(set) var outputSeals = false

    private var decoder: WebSocketDecoder
    private var encoder: WebSocketEncoder<Random>
    private var output: [UInt8] = []
    /// The payload of the latest ping not answered yet, when pongs are automatic.
    private var owedPong: [UInt8]?
    /// The output buffer's capacity is kept up to this size between drains.
    private static var retainedOutputCapacity: Int { 4 << 20 }

    /// - Parameters:
    ///   - role: this endpoint's role (a client masks what it sends and expects unmasked frames).
    ///   - maximumMessageSize: the largest message (and frame) accepted from the peer (default 16 MiB); larger is a
    ///     1009. At least 125 bytes are always accepted for a frame, so that control frames fit.
    ///   - automaticPongs: answer pings without the owner (default true).
    ///   - random: the source of masking keys (used by the client role only).
    public init(role: Role, maximumMessageSize: Int = 16 << 20, automaticPongs: Bool = true, random: Random) {
        let limit = max(0, maximumMessageSize)
        self.decoder = WebSocketDecoder(role: role, maximumFrameSize: max(125, limit), maximumMessageSize: limit)
        self.encoder = WebSocketEncoder(role: role, random: random)
        self.automaticPongs = automaticPongs
    }

    /// Bytes received and not yet returned as events: the frames in the parser's buffer and the fragments of the
    /// message being assembled. At most one message of `maximumMessageSize` plus what one `receive` appended.
    public var bufferedInboundBytes: Int { self.decoder.bufferedByteCount }

    /// Bytes waiting in the output (a pong owed counts once it is encoded by `drainOutput`).
    public var outputByteCount: Int { self.output.count }

    /// The payload of the pong owed for the latest unanswered ping, which the next `drainOutput` encodes (nil: none).
    public var owedPongPayload: [UInt8]? {
        guard case .open = self.state else { return nil }
        return self.owedPong
    }

    // MARK: - Input

    /// Appends bytes read from the socket. Ignored once the connection is closed.
    public mutating func receive(_ bytes: UnsafeRawBufferPointer) {
        guard !self.isClosed else { return }
        self.decoder.append(bytes)
    }

    /// Appends bytes read from the socket (for example what followed the handshake response in the same read).
    public mutating func receive(_ bytes: some Sequence<UInt8>) {
        guard !self.isClosed else { return }
        self.decoder.append(bytes)
    }

    /// Lends the next event to `body` and returns its result, or returns nil when more bytes are needed or the
    /// connection is closed.
    public mutating func nextEvent<Result>(_ body: (Event) -> Result) -> Result? {
        guard !self.isClosed else { return nil }
        // The decoder lends the message while it is being mutated, so the closure touches no other state of this
        // value: it notes what to change, and the change happens once the decoder has returned.
        let answersPings: Bool
        if case .open = self.state { answersPings = self.automaticPongs } else { answersPings = false }
        var pingPayload: [UInt8]?
        var closeFrame: (code: UInt16?, reason: String)?
        var result: Result?
        do throws(ProtocolError) {
            let found: Void? = try self.decoder.nextMessage { message in
                switch message.opcode {
                case .close:
                    closeFrame = (message.closeCode, String(decoding: message.closeReason, as: UTF8.self))
                case .ping:
                    if answersPings { pingPayload = Array(message.payload) }
                    result = body(.received(message))
                default:
                    result = body(.received(message))
                }
            }
            guard found != nil else { return nil }
        } catch {
            return body(.closed(self.violated(error)))
        }
        if let pingPayload {
            self.owedPong = pingPayload  // only the latest unanswered ping needs its pong (§5.5.3)
        }
        if let closeFrame {
            return body(.closed(self.peerClosed(code: closeFrame.code, reason: closeFrame.reason)))
        }
        return result
    }

    private mutating func peerClosed(code: UInt16?, reason: String) -> Closure {
        let closure: Closure
        switch self.state {
        case .open:
            // §5.5.1: answer with a close frame echoing the status code (none if there was none).
            self.queueClose(code: code, reason: "")
            closure = .byPeer(code: code, reason: reason)
        case .closing(let sentCode):
            closure = .byUs(sentCode: sentCode, answeredCode: code, answeredReason: reason)
        case .closed:
            preconditionFailure("no frame is decoded once closed")
        }
        self.state = .closed(closure)
        return closure
    }

    private mutating func violated(_ error: ProtocolError) -> Closure {
        switch self.state {
        case .open:
            self.queueClose(code: error.closeCode, reason: error.reason)
        case .closing:
            break  // our close frame is already out: nothing more may be sent
        case .closed:
            preconditionFailure("no frame is decoded once closed")
        }
        let closure = Closure.violation(error)
        self.state = .closed(closure)
        return closure
    }

    // MARK: - Output

    /// Appends a text or binary message to the output; false (nothing appended) unless open.
    @discardableResult
    public mutating func send(_ opcode: Opcode, payload: UnsafeRawBufferPointer) -> Bool {
        precondition(opcode == .text || opcode == .binary, "send takes text or binary; use ping, pong or close")
        guard case .open = self.state else { return false }
        self.encoder.encode(opcode, payload: payload, into: &self.output)
        return true
    }

    /// Appends the message `nextEvent` lent last (a text or binary message) as our own, without copying it out of
    /// the receive buffer first: an echo. False (nothing appended) unless open and the last event was a message.
    @discardableResult
    public mutating func echoLastMessage() -> Bool {
        guard case .open = self.state else { return false }
        // A copy of the decoder value shares its buffers: it lends the payload while the encoder and the output,
        // other stored properties, are written.
        let decoder = self.decoder
        let echoed = decoder.withLastMessage { message -> Bool in
            guard message.opcode == .text || message.opcode == .binary else { return false }
            self.encoder.encode(message.opcode, payload: message.payload, into: &self.output)
            return true
        }
        return echoed ?? false
    }

    /// Appends a ping; false unless open.
    /// - Throws: `WireUsageError` when the payload is over 125 bytes.
    @discardableResult
    public mutating func ping(_ payload: some Collection<UInt8>) throws(WireUsageError) -> Bool {
        guard case .open = self.state else { return false }
        try self.encoder.ping(payload, into: &self.output)
        return true
    }

    /// Appends a pong (for an owner that answers pings itself); false unless open.
    /// - Throws: `WireUsageError` when the payload is over 125 bytes.
    @discardableResult
    public mutating func pong(_ payload: some Collection<UInt8>) throws(WireUsageError) -> Bool {
        guard case .open = self.state else { return false }
        try self.encoder.pong(payload, into: &self.output)
        return true
    }

    /// Starts the closing handshake: appends our close frame (after a pong still owed) and moves to `.closing`.
    /// - Parameters:
    ///   - code: a code valid on the wire; any other is sent as 1000.
    ///   - reason: cut to 123 bytes of UTF-8 at a character boundary.
    /// - Returns: false (nothing appended) unless open.
    @discardableResult
    public mutating func close(code: UInt16, reason: String) -> Bool {
        guard case .open = self.state else { return false }
        let code = CloseCode.isValidOnWire(code) ? code : 1000
        self.queueClose(code: code, reason: Self.truncated(reason, toUTF8Count: 123))
        self.state = .closing(sentCode: code)
        return true
    }

    /// Lends the output to `body` (`seals`: it ends with our close frame, write it as the last write), then empties
    /// it. A pong still owed is encoded first. Nothing is lent when the output is empty.
    public mutating func drainOutput(_ body: (_ bytes: UnsafeRawBufferPointer, _ seals: Bool) -> Void) {
        self.drainOutput(lending: body, giving: { bytes, seals in bytes.withUnsafeBytes { body($0, seals) } })
    }

    /// Like `drainOutput(_:)`, but an output grown past the capacity the engine keeps between writes (4 MiB: a large
    /// message's echo or send) is given whole to `large`, so that a writer can queue the array itself instead of
    /// copying what the kernel does not take at once; the engine starts an empty output.
    public mutating func drainOutput(
        lending small: (_ bytes: UnsafeRawBufferPointer, _ seals: Bool) -> Void,
        giving large: (_ bytes: [UInt8], _ seals: Bool) -> Void
    ) {
        self.encodeOwedPong()
        guard !self.output.isEmpty else { return }
        let seals = self.outputSeals
        guard self.output.capacity > Self.retainedOutputCapacity else {
            self.output.withUnsafeBytes { small($0, seals) }
            self.output.removeAll(keepingCapacity: true)
            return
        }
        let given = self.output
        self.output = []
        large(given, seals)
    }

    private mutating func encodeOwedPong() {
        guard let payload = self.owedPong else { return }
        self.owedPong = nil
        guard case .open = self.state else { return }
        do {
            try self.encoder.pong(payload, into: &self.output)
        } catch {
            preconditionFailure("a ping's payload (at most 125 bytes, checked by the decoder) fits a pong: \(error)")
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

    private var isClosed: Bool {
        if case .closed = self.state { return true }
        return false
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

extension WebSocketConnection where Random == SystemRandomNumberGenerator {
    /// A connection whose masking keys (client role) come from the system CSPRNG.
    public init(role: Role, maximumMessageSize: Int = 16 << 20, automaticPongs: Bool = true) {
        self.init(
            role: role, maximumMessageSize: maximumMessageSize, automaticPongs: automaticPongs,
            random: SystemRandomNumberGenerator())
    }
}
