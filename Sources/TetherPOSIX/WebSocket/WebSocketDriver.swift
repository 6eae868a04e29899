#if os(Linux)
import Synchronization
import TetherWire

/// What the owner of a `WebSocketDriver` hears, on the loop thread.
package protocol WebSocketDriverDelegate: AnyObject {
    /// A message the engine lends (text, binary, ping or pong), with the engine locked: copy or record what is
    /// needed and keep what to do with it; true asks for `deliverReceived()` once unlocked. Must not call into the
    /// driver.
    func received(_ message: BorrowedMessage) -> Bool
    /// Acts on what the last `received(_:)` kept, with the engine unlocked (it may call the driver).
    func deliverReceived()
    /// The pong for our ping `id` arrived.
    func pongReceived(id: UInt64)
    /// A pong the engine owed the peer (automatic pongs) was written.
    func pongSent(payload: [UInt8])
    /// The closing handshake completed, or the peer broke the protocol: nothing more is delivered.
    func closed(_ closure: WebSocketClosure)
    /// The stream has ended (`streamEnded()` was called): the last call. `failedPings` were never answered.
    func ended(_ ending: WebSocketEnding, failedPings: [UInt64])
    /// What flow control did (for observation: tests and the test server's record).
    func flow(_ event: WebSocketFlowEvent)
}

/// What flow control did on one connection.
package enum WebSocketFlowEvent: Equatable, Sendable {
    /// What the loop wrote (pongs, echoes, the close frame) left this much queued for the kernel.
    case written(queuedBytes: Int)
    /// More than the outbound high watermark waits to be written: reading stopped.
    case pausedForWriteRoom(queuedBytes: Int)
    /// The write queue is down to the low watermark: reading goes on (unless the consumer holds it).
    case resumedAfterWriteRoom
}

/// The one way to a WebSocket connection once it is open: it runs a `WebSocketConnection` engine over a
/// `ByteStream`, for the client transport and the test server alike. Its owner tells it each fact with one method
/// (bytes read, the stream's end, a message to send, a ping, a pong, our close, a reset, the consumer's hold), which
/// runs the actions that fact leads to, and hears the results as its delegate. Nothing else touches the engine or
/// writes to the stream.
///
/// The engine is behind a lock, so that a sender on another thread encodes (compresses, masks) its message on its
/// own thread (`send`, `sendPing`) instead of queueing behind the messages the loop is delivering; everything else
/// runs on the loop thread. Every write is made with the lock held, in the same hold as the encoding that produced
/// it: the stream's write queue takes frames in the order the engine encoded them, whatever the number of threads
/// sending, which permessage-deflate's context takeover needs (the peer inflates each message against the ones
/// before it), and nothing follows our close frame.
///
/// Not generic, like the engine: a generic driver ran unspecialized in the modules that use it.
package final class WebSocketDriver: @unchecked Sendable {
    // Why `@unchecked Sendable` is safe (as in `TLSStream`): the engine, the one state that is not Sendable, is
    // touched only inside `withEngine(_:)`, which holds `lock` for the whole access, and it is handed over with
    // `sending`; the loop-side state is a `LoopBound`, which checks its thread on every access; `stream` is Sendable.
    private typealias Engine = WebSocketConnection

    private final class EngineBox {
        var engine: Engine
        /// When bytes arrived, for `inboundArrival(now:)`; nil unless the driver tracks it. Guarded with the engine.
        var arrival: Arrival?

        init(_ engine: sending Engine, arrival: Arrival?) {
            self.engine = engine
            self.arrival = arrival
        }
    }

    /// When the latest bytes arrived, when the latest whole frame was completed and when the latest pong came, on
    /// the stream's loop clock.
    private struct Arrival {
        var lastByte: ContinuousClock.Instant
        /// The engine's count of whole frames when `lastFrameCompleted` was last brought up to date.
        var framesSeen = 0
        var lastFrameCompleted: ContinuousClock.Instant?
        /// The engine's latest pong when `latestPongArrived` was last brought up to date.
        var pongSeen: UInt64?
        var latestPongArrived: ContinuousClock.Instant?

        /// Frames (and a pong) the engine decoded since the last look came with the latest bytes: they are decoded
        /// as those bytes are handled (or when a hold ends, with no read in between).
        mutating func catchUp(_ decoded: (framesCompleted: Int, latestPong: UInt64?)) {
            if decoded.framesCompleted != self.framesSeen {
                self.framesSeen = decoded.framesCompleted
                self.lastFrameCompleted = self.lastByte
            }
            if decoded.latestPong != self.pongSeen {
                self.pongSeen = decoded.latestPong
                self.latestPongArrived = self.lastByte
            }
        }
    }

    /// What has arrived on the connection at one moment (`inboundArrival(now:)`).
    package struct InboundArrival: Equatable, Sendable {
        /// Frames received whole so far.
        package var framesCompleted: Int
        /// Part of the next frame has arrived and the rest has not.
        package var frameInProgress: Bool
        /// How long ago the latest bytes arrived (the open, before any).
        package var sinceLastByte: Duration
        /// How long ago the bytes that completed the latest whole frame arrived; nil before the first.
        package var sinceLastFrameCompleted: Duration?
        /// The id of the latest of our pings whose pong has been decoded: it may still be on its way to the owner.
        package var latestPongID: UInt64? = nil
        /// How long ago the bytes that brought that pong arrived.
        package var sinceLatestPong: Duration? = nil
    }

    /// Loop-confined state.
    private final class LoopSide {
        weak var delegate: (any WebSocketDriverDelegate)?
        var closeTimer: TimerHandle?
        /// `runActions` is running (a delegate's call into the driver lets the running loop pick its facts up).
        var running = false
        /// A write completion asked for while `runActions` was running: attached to its next write.
        var completion: TCPConnection.WriteCompletion?
        /// Our close frame was handed to the stream and is not all in the kernel yet.
        var sealPending = false
        var sealWaiters: [() -> Void] = []
    }

    private let stream: any ByteStream
    private let lock = Mutex(())
    /// Only inside `withEngine(_:)`.
    private let unguardedEngine: EngineBox
    private let side: LoopBound<LoopSide>

    /// Call on the stream's loop thread; nothing runs until `start()`. The driver holds `delegate` weakly.
    /// - Parameter tracksArrival: note the time of every read (one reading of the loop's clock per read), so that
    ///   `inboundArrival(now:)` can say when bytes came; off (the default), nothing is noted.
    package init(
        stream: any ByteStream, engine: sending WebSocketConnection, delegate: any WebSocketDriverDelegate,
        tracksArrival: Bool = false
    ) {
        self.stream = stream
        self.unguardedEngine = EngineBox(engine, arrival: tracksArrival ? Arrival(lastByte: stream.loop.now) : nil)
        self.side = LoopBound(LoopSide(), loop: stream.loop)
        self.side.value.delegate = delegate
    }

    // MARK: - Facts, on the loop thread

    /// The owner is ready for the delegate's calls: runs what the engine has to do from the start (messages that
    /// came in the handshake's read, a hold asked for before the open).
    package func start() {
        self.runActions()
    }

    /// Bytes the stream read.
    package func received(_ bytes: UnsafeRawBufferPointer) {
        self.lock.withLock { _ in
            let box = self.unguardedEngine
            // Changed in place, and the engine read through `inout`: its computed property read through the box
            // copied the whole engine (retaining everything it holds) once per read.
            box.arrival?.catchUp(Self.decoded(&box.engine))
            box.arrival?.lastByte = self.stream.loop.now
            box.engine.bytesReceived(bytes)
        }
        self.runActions()
    }

    /// The engine's count of whole frames received and the id of its latest pong, read in place.
    private static func decoded(_ engine: inout Engine) -> (framesCompleted: Int, latestPong: UInt64?) {
        (engine.inboundFrames.completed, engine.latestPongReceived)
    }

    /// The stream has ended: the delegate hears `ended` last.
    package func streamEnded() {
        self.withEngine { $0.streamEnded() }
        self.runActions()
    }

    /// The consumer of delivered messages is behind (`held`) or has caught up. Inside a delivery, the hold stops the
    /// next one.
    package func consumerHolds(_ held: Bool) {
        self.withEngine { $0.consumerHolds(held) }
        self.runActions()
    }

    /// Starts the closing handshake (see `WebSocketConnection.close(code:reason:)`): our close frame is the last
    /// write. False (nothing sent) unless open.
    @discardableResult
    package func close(code: UInt16, reason: String) -> Bool {
        let closing = self.withEngine { $0.close(code: code, reason: reason) }
        self.runActions()
        return closing
    }

    /// Gives up on the connection: the stream is reset (what is queued is dropped) and `ended` follows.
    package func reset() {
        self.withEngine { $0.reset() }
        self.runActions()
    }

    /// A ping with any payload, not tracked by id (see `sendPing(id:)` for ours); false unless open.
    /// - Throws: `WireUsageError` when the payload is over 125 bytes.
    @discardableResult
    package func ping(_ payload: [UInt8]) throws(WireUsageError) -> Bool {
        let sent = try self.withEngine { engine throws(WireUsageError) in try engine.ping(payload) }
        self.runActions()
        return sent
    }

    /// A pong of the owner's own (without automatic pongs); false unless open.
    /// - Throws: `WireUsageError` when the payload is over 125 bytes.
    @discardableResult
    package func pong(_ payload: [UInt8]) throws(WireUsageError) -> Bool {
        let sent = try self.withEngine { engine throws(WireUsageError) in try engine.pong(payload) }
        self.runActions()
        return sent
    }

    /// Sends the message just delivered back as it came (from `deliverReceived()`, so that the echoes of one read
    /// go out in one write); false unless open and it was a data message.
    @discardableResult
    package func echoLastMessage() -> Bool {
        let echoed = self.withEngine { $0.echoLastMessage() }
        self.runActions()
        return echoed
    }

    /// A message compressed by the caller, sent as one frame with RSV1 (a test peer's crafted message); false unless
    /// open with permessage-deflate negotiated.
    @discardableResult
    package func sendPrecompressed(_ opcode: Opcode, deflated payload: [UInt8]) -> Bool {
        let sent = self.withEngine { $0.sendPrecompressed(opcode, deflated: payload) }
        self.runActions()
        return sent
    }

    /// Messages the loop sends together, in one write. `body` encodes each with `send`, which returns how many bytes
    /// the batch holds so far, or nil (nothing encoded) once the connection no longer sends; `body` returns what to
    /// call once the batch is in the kernel (on the next loop turn when nothing was written), if anything: how a
    /// stream of messages goes out one batch at a time, with reads (and pongs) in between.
    package func sendBatch(
        _ body: (_ send: (Opcode, UnsafeRawBufferPointer) -> Int?) -> TCPConnection.WriteCompletion?
    ) {
        let completion = self.withEngine { engine in
            let start = engine.outputByteCount
            return body { opcode, payload in
                engine.send(opcode, payload: payload) ? engine.outputByteCount - start : nil
            }
        }
        self.runActions(completion: completion)
    }

    /// Calls `body` once our close frame is all in the kernel, or the connection has ended (now if neither is
    /// pending).
    package func whenCloseFrameWritten(_ body: @escaping () -> Void) {
        let side = self.side.value
        guard side.sealPending else { return body() }
        side.sealWaiters.append(body)
    }

    // MARK: - Sending, from any thread

    /// What `send` did.
    package enum Sending: Sendable {
        /// The frame is in the stream's write queue, whole, after every frame encoded before it: `finish()` returns
        /// once it is all in the kernel, or throws the error that stopped it.
        case started(StartedSend)
        /// More than the high watermark is queued: nothing was encoded. Wait for room (`waitForRoom`), then send
        /// again without checking.
        case waitForRoom(atMost: Int)
        /// Not open: our close frame went first, or the connection is over. Nothing was encoded.
        case notOpen
    }

    /// Sends a data message: encodes (compresses, masks) it on the caller's thread and queues it on the stream,
    /// both with the engine locked, so that frames reach the wire in the order they were compressed whatever the
    /// number of senders. Once started, the frame is written whole whatever becomes of the caller (a cancelled task
    /// included): the stream is never left with part of a frame, unless the connection breaks.
    /// - Parameter checkingRoom: refuse with `.waitForRoom` above the high watermark (false after waiting once).
    package func send(
        _ opcode: Opcode, payload: UnsafeRawBufferPointer, compression: MessageCompression = .automatic,
        checkingRoom: Bool = true
    ) -> Sending {
        self.withEngine { engine in
            let decision = engine.encodeMessage(
                opcode, payload: payload, queuedWriteBytes: checkingRoom ? self.stream.queuedWriteBytes : nil,
                compression: compression)
            switch decision {
            case .frame(let frame):
                let started = frame.withUnsafeBytes {
                    self.stream.startWrite($0, array: frame, sealing: false, delivery: .awaited)
                }
                return .started(started)
            case .waitForRoom(let low):
                return .waitForRoom(atMost: low)
            case .notOpen:
                return .notOpen
            }
        }
    }

    /// Returns once at most `limit` bytes are queued for the kernel, or the connection has ended (a sender told
    /// `.waitForRoom`). Not cancellable: the queue drains, or the connection ends (its close timeout and the
    /// heartbeat bound how long that takes).
    package func waitForRoom(atMost limit: Int) async {
        await withCheckedContinuation { (room: CheckedContinuation<Void, Never>) in
            self.stream.whenQueuedWrites(atMost: limit) { room.resume() }
        }
    }

    /// Bytes queued for the kernel and not yet taken (what the outbound watermarks measure).
    package var queuedWriteBytes: Int { self.stream.queuedWriteBytes }

    /// Sends our ping `id` and writes it at once; false (it failed) unless open. Its pong arrives as
    /// `pongReceived(id:)`; a ping never answered is among the `failedPings` of `ended`.
    package func sendPing(id: UInt64) -> Bool {
        self.withEngine { engine in
            guard engine.sendPing(id: id) else { return false }
            // A failure ends the stream, which `ended` reports (with this ping among the failed ones).
            _ = engine.takeOutput { output, _ in self.write(output, sealing: false, completion: nil) }
            return true
        }
    }

    // MARK: - Running actions

    private func withEngine<Result, Failure: Error>(
        _ body: (inout Engine) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try self.lock.withLock { _ throws(Failure) in try body(&self.unguardedEngine.engine) }
    }

    /// Runs the engine's actions until it needs a new fact. `completion`, if any, follows the last write of this run
    /// (or the next loop turn when nothing was written).
    private func runActions(completion: TCPConnection.WriteCompletion? = nil) {
        let side = self.side.value
        guard !side.running else {
            // Called from a delegate inside the running loop, which picks the new actions up.
            if let completion { side.completion = completion }
            return
        }
        side.running = true
        side.completion = completion
        var step = Step.done
        while self.withEngine({ engine in
            engine.nextAction(queuedWriteBytes: self.stream.queuedWriteBytes) { step = self.perform($0, side: side) }
        }) {
            self.run(step, side: side)
        }
        side.running = false
        if let completion = side.completion {
            side.completion = nil
            self.stream.loop.execute { completion(.success(())) }
        }
    }

    /// What has arrived so far, as of `now` on the stream's loop clock, when the driver tracks arrival (nil
    /// otherwise): for a heartbeat that tells a link delivering a large frame from a dead one. Any thread.
    package func inboundArrival(now: ContinuousClock.Instant) -> InboundArrival? {
        self.lock.withLock { _ in
            let box = self.unguardedEngine
            guard var arrival = box.arrival else { return nil }
            let frames = box.engine.inboundFrames
            arrival.catchUp((frames.completed, box.engine.latestPongReceived))
            box.arrival = arrival
            return InboundArrival(
                framesCompleted: frames.completed, frameInProgress: frames.inProgress,
                sinceLastByte: arrival.lastByte.duration(to: now),
                sinceLastFrameCompleted: arrival.lastFrameCompleted.map { $0.duration(to: now) },
                latestPongID: arrival.pongSeen,
                sinceLatestPong: arrival.latestPongArrived.map { $0.duration(to: now) })
        }
    }

    /// What to do once the engine is unlocked.
    private enum Step {
        case done
        case deliver
        case written
        case pongReceived(UInt64)
        case pongSent([UInt8])
        case awaitWriteRoom(atMost: Int)
        case armCloseTimer(milliseconds: Int)
        case closed(WebSocketClosure)
        case ended(WebSocketEnding, failedPings: [UInt64])
    }

    /// Runs the part of an action that needs the lent bytes (with the engine locked) and returns the rest.
    private func perform(_ action: Engine.Action, side: LoopSide) -> Step {
        switch action {
        case .deliver(let message):
            return side.delegate?.received(message) == true ? .deliver : .done
        case .write(let output, let seals):
            var completion = side.completion
            side.completion = nil
            if seals {
                side.sealPending = true
                let previous = completion
                completion = { [self] result in
                    previous?(result)
                    self.closeFrameWritten()
                }
            }
            self.write(output, sealing: seals, completion: completion)
            return .written
        case .pauseReading:
            self.stream.pauseReading()
        case .resumeReading:
            self.stream.resumeReading()
        case .closeStream:
            self.stream.close()
        case .resetStream:
            self.stream.reset()
        case .pongReceived(let id):
            return .pongReceived(id)
        case .pongSent(let payload):
            return .pongSent(payload)
        case .awaitWriteRoom(let low):
            return .awaitWriteRoom(atMost: low)
        case .armCloseTimer(let milliseconds):
            return .armCloseTimer(milliseconds: milliseconds)
        case .closed(let closure):
            return .closed(closure)
        case .ended(let ending, let failedPings):
            return .ended(ending, failedPings: failedPings)
        }
        return .done
    }

    private func run(_ step: Step, side: LoopSide) {
        switch step {
        case .done:
            break
        case .deliver:
            side.delegate?.deliverReceived()
        case .written:
            side.delegate?.flow(.written(queuedBytes: self.stream.queuedWriteBytes))
        case .pongReceived(let id):
            side.delegate?.pongReceived(id: id)
        case .pongSent(let payload):
            side.delegate?.pongSent(payload: payload)
        case .awaitWriteRoom(let low):
            side.delegate?.flow(.pausedForWriteRoom(queuedBytes: self.stream.queuedWriteBytes))
            self.stream.whenQueuedWrites(atMost: low) { [self] in
                self.withEngine { $0.writeRoomAvailable() }
                self.side.value.delegate?.flow(.resumedAfterWriteRoom)
                self.runActions()
            }
        case .armCloseTimer(let milliseconds):
            side.closeTimer?.cancel()
            side.closeTimer = self.stream.loop.schedule(afterMilliseconds: milliseconds) { [self] in
                self.withEngine { $0.closeTimerFired() }
                self.runActions()
            }
        case .closed(let closure):
            side.delegate?.closed(closure)
        case .ended(let ending, let failedPings):
            side.closeTimer?.cancel()
            side.closeTimer = nil
            self.closeFrameWritten()  // no write completion can come any more
            side.delegate?.ended(ending, failedPings: failedPings)
        }
    }

    private func write(_ output: Engine.Output, sealing: Bool, completion: TCPConnection.WriteCompletion?) {
        switch output {
        case .borrowed(let bytes):
            self.stream.write(borrowing: bytes, sealing: sealing, completion: completion)
        case .owned(let bytes):
            // A large output (an echo of a large message) is queued as the engine's own array, not copied again.
            self.stream.write(bytes, sealing: sealing, completion: completion)
        }
    }

    private func closeFrameWritten() {
        let side = self.side.value
        side.sealPending = false
        let waiters = side.sealWaiters
        side.sealWaiters.removeAll()
        for waiter in waiters { waiter() }
    }
}
#endif
