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

/// Runs a `WebSocketConnection` engine's actions over a `ByteStream`: the one I/O glue of the WebSocket protocol,
/// for the client transport and the test server alike. The owner feeds it what the stream reports (`received`,
/// `streamEnded`), its own facts (`withEngine` then `runActions`), and hears the results as its delegate.
///
/// The engine is behind a lock, so that a sender on another thread encodes its message on its own thread
/// (`encodeMessage`, `sendPing`) instead of queueing behind the messages the loop is delivering; everything else
/// runs on the loop thread. Writes the engine asks for are made with the lock held, so they reach the stream in the
/// engine's order, and nothing follows our close frame.
///
/// Not generic, like the engine: a generic driver ran unspecialized in the modules that use it.
package final class WebSocketDriver: @unchecked Sendable {
    // Why `@unchecked Sendable` is safe (as in `TLSStream`): the engine, the one state that is not Sendable, is
    // touched only inside `withEngine(_:)`, which holds `lock` for the whole access, and it is handed over with
    // `sending`; the loop-side state is a `LoopBound`, which checks its thread on every access; `stream` is Sendable.
    package typealias Engine = WebSocketConnection

    private final class EngineBox {
        var engine: Engine
        /// When bytes arrived, for `inboundArrival(now:)`; nil unless the driver tracks it. Guarded with the engine.
        var arrival: Arrival?

        init(_ engine: sending Engine, arrival: Arrival?) {
            self.engine = engine
            self.arrival = arrival
        }
    }

    /// When the latest bytes arrived and when the latest whole frame was completed, on the stream's loop clock.
    private struct Arrival {
        var lastByte: ContinuousClock.Instant
        /// The engine's count of whole frames when `lastFrameCompleted` was last brought up to date.
        var framesSeen = 0
        var lastFrameCompleted: ContinuousClock.Instant?

        /// Frames the engine completed since the last look were completed by the latest bytes: they are decoded
        /// as those bytes are handled (or when a hold ends, with no read in between).
        mutating func catchUp(framesCompleted: Int) {
            guard framesCompleted != self.framesSeen else { return }
            self.framesSeen = framesCompleted
            self.lastFrameCompleted = self.lastByte
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

    package let stream: any ByteStream
    private let lock = Mutex(())
    /// Only inside `withEngine(_:)`.
    private let unguardedEngine: EngineBox
    private let side: LoopBound<LoopSide>

    /// Call on the stream's loop thread. The driver holds `delegate` weakly.
    /// - Parameter tracksArrival: note the time of every read (one reading of the loop's clock per read), so that
    ///   `inboundArrival(now:)` can say when bytes came; off (the default), nothing is noted.
    package init(
        stream: any ByteStream, engine: sending Engine, delegate: any WebSocketDriverDelegate,
        tracksArrival: Bool = false
    ) {
        self.stream = stream
        self.unguardedEngine = EngineBox(engine, arrival: tracksArrival ? Arrival(lastByte: stream.loop.now) : nil)
        self.side = LoopBound(LoopSide(), loop: stream.loop)
        self.side.value.delegate = delegate
    }

    // MARK: - Facts, on the loop thread

    /// Bytes the stream read.
    package func received(_ bytes: UnsafeRawBufferPointer) {
        self.lock.withLock { _ in
            let box = self.unguardedEngine
            if var arrival = box.arrival {
                arrival.catchUp(framesCompleted: box.engine.inboundFrames.completed)
                arrival.lastByte = self.stream.loop.now
                box.arrival = arrival
            }
            box.engine.bytesReceived(bytes)
        }
        self.runActions()
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

    /// Tells the engine a fact of the owner's own (send, ping, pong, close, echo, reset); call `runActions` after.
    /// Any thread; the body runs with the engine locked.
    package func withEngine<Result>(_ body: (inout Engine) -> Result) -> Result {
        self.lock.withLock { _ in body(&self.unguardedEngine.engine) }
    }

    /// Runs the engine's actions until it needs a new fact. `completion`, if any, follows the last write of this run
    /// (or the next loop turn when nothing was written).
    package func runActions(completion: TCPConnection.WriteCompletion? = nil) {
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

    /// Calls `body` once our close frame is all in the kernel, or the connection has ended (now if neither is
    /// pending).
    package func whenCloseFrameWritten(_ body: @escaping () -> Void) {
        let side = self.side.value
        guard side.sealPending else { return body() }
        side.sealWaiters.append(body)
    }

    /// What has arrived so far, as of `now` on the stream's loop clock, when the driver tracks arrival (nil
    /// otherwise): for a heartbeat that tells a link delivering a large frame from a dead one. Any thread.
    package func inboundArrival(now: ContinuousClock.Instant) -> InboundArrival? {
        self.lock.withLock { _ in
            let box = self.unguardedEngine
            guard var arrival = box.arrival else { return nil }
            let frames = box.engine.inboundFrames
            arrival.catchUp(framesCompleted: frames.completed)
            box.arrival = arrival
            return InboundArrival(
                framesCompleted: frames.completed, frameInProgress: frames.inProgress,
                sinceLastByte: arrival.lastByte.duration(to: now),
                sinceLastFrameCompleted: arrival.lastFrameCompleted.map { $0.duration(to: now) })
        }
    }

    // MARK: - Sending, from any thread

    /// Encodes a data message on the caller's thread, or says why it may not be sent now (see
    /// `WebSocketConnection.encodeMessage`). The caller writes the frame with `stream.send`.
    package func encodeMessage(
        _ opcode: Opcode, payload: UnsafeRawBufferPointer, checkingRoom: Bool,
        compression: MessageCompression = .automatic
    ) -> Engine.SendDecision {
        self.withEngine { engine in
            engine.encodeMessage(
                opcode, payload: payload, queuedWriteBytes: checkingRoom ? self.stream.queuedWriteBytes : nil,
                compression: compression)
        }
    }

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
