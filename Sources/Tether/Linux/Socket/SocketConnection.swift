#if os(Linux)
import Foundation
import Synchronization
import TetherCore
import TetherPOSIX
import TetherWire

/// One connection made by `SocketTransport`.
///
/// Thread confinement: the connecting state (handshake parser, timers) lives in a `SocketConnectionCore` wrapped in
/// a `LoopBound` of the connection's event loop, and is touched only on that loop's single thread. The TCP callbacks
/// and timers run there by construction; `close` and `waitUntilCloseSent` hop there with `EventLoop.execute`, which
/// runs work in call order. `LoopBound` checks the thread on every access, so a mistake traps instead of racing.
///
/// Sending does not hop: once open, `send` and `sendPing` go to the WebSocket driver on the caller's thread, which
/// encodes (compresses, masks) the frame there and queues it on the stream in the same hold of its lock, so a send
/// never queues behind the messages the loop is delivering, and any number of concurrent senders put their frames
/// on the wire in the order they were compressed. The engine is the one answer to "may we still send": after our
/// close frame, or once the connection is over, it refuses.
final class SocketConnection: TransportConnection {
    let events: AsyncStream<TransportEvent>
    private let loop: EventLoop
    private let core: LoopBound<SocketConnectionCore>
    /// Where `send` finds the open connection's engine (internal for tests).
    let slot = WebSocketSlot()
    /// Times the attempt (`attemptTimings()`), shared with the core.
    private let stopwatch: AttemptStopwatch
    private let outlet: EventOutlet
    /// The largest message `send` accepts (the request's `maximumMessageSize`).
    private let sendLimit: Int

    /// What flow control did, for tests.
    private let flowObserver: (@Sendable (FlowObservation) -> Void)?

    /// - Parameters:
    ///   - tlsContexts: where a `wss://` connection's TLS context comes from and stays (see `SocketEndpoint.make`).
    ///   - handler: see `SocketTransport.connect(_:deliveringOn:_:)`; nil: events go to `events`.
    ///   - flowObserver: told when flow control acts (tests check the bounds with it).
    init(
        request: TransportRequest, loop: EventLoop, dialer: SocketDialer = .direct,
        tlsContexts: TLSContextKeeper? = nil, handler: (@Sendable (TransportEvent) -> Void)? = nil,
        flowObserver: (@Sendable (FlowObservation) -> Void)? = nil
    ) {
        self.flowObserver = flowObserver
        let (events, sink) = AsyncStream.makeStream(of: TransportEvent.self, bufferingPolicy: .unbounded)
        self.events = events
        self.loop = loop
        let outlet = EventOutlet(sink: sink, handler: handler, loop: loop)
        self.outlet = outlet
        self.sendLimit = request.maximumMessageSize
        self.stopwatch = AttemptStopwatch(loop: loop)
        let core = SocketConnectionCore(
            request: request, outlet: outlet, loop: loop, slot: self.slot, stopwatch: self.stopwatch, dialer: dialer,
            tlsContexts: tlsContexts, flowObserver: flowObserver
        )
        self.core = LoopBound(core, loop: loop)
        switch SocketEndpoint.make(for: request, contexts: tlsContexts) {
        case .success(let endpoint):
            let core = self.core
            if !loop.execute({ core.value.start(endpoint, bound: core) }) {
                // The loop has shut down (tests only); a handler, which runs only on the loop, hears nothing.
                outlet.emitLater(.ended(.connectFailed(.system(ECANCELED))))
                outlet.finish()
            }
        case .failure(let reason):
            // Nothing was started, so the core stays idle: `send` throws `.notOpen`, `close` does nothing.
            if case .tlsConfiguration(let detail) = reason {
                outlet.emitLater(.ended(.tlsFailed(detail: detail, permanent: true)))
            } else {
                outlet.emitLater(.ended(.connectFailed(.unsupported)))
            }
            outlet.finish()
        }
    }

    deinit {
        // Dropped without `close`: close as "going away" so the socket is not left open. No effect once ended.
        let core = self.core
        self.loop.execute { core.value.close(code: 1001, reason: "") }
    }

    nonisolated(nonsending) func send(_ message: WebSocketMessage) async throws {
        try await self.send(message, compression: .automatic)
    }

    nonisolated(nonsending) func send(_ message: WebSocketMessage, compression: MessageCompression) async throws {
        let size: Int
        switch message {
        case .text(let text): size = text.utf8.count
        case .binary(let data): size = data.count
        }
        guard size <= self.sendLimit else { throw WebSocketSendError.messageTooLarge(size: size, limit: self.sendLimit) }
        guard let webSocket = self.slot.webSocket else { throw WebSocketSendError.notOpen }
        var checkingRoom = true
        while true {
            let sending: ClientWebSocket.Sending
            switch message {
            case .text(var text):
                sending = text.withUTF8 {
                    webSocket.send(
                        .text, payload: UnsafeRawBufferPointer($0), compression: compression,
                        checkingRoom: checkingRoom)
                }
            case .binary(let data):
                sending = data.withUnsafeBytes {
                    webSocket.send(.binary, payload: $0, compression: compression, checkingRoom: checkingRoom)
                }
            }
            switch sending {
            case .started(let write):
                // The frame is queued whole: a cancelled caller still waits here, so that `send` returns only once
                // it is in the kernel (or failed), never leaving the caller unsure whether it went.
                do {
                    try await write.finish()
                } catch .closed {
                    throw WebSocketSendError.notOpen  // the connection just ended
                } catch {
                    throw WebSocketSendError.connectionFailed
                }
                return
            case .waitForRoom(let low):
                // Above the high watermark: wait for the queue to be down to the low one (or for the end).
                self.flowObserver?(.sendWaitingForRoom(queuedBytes: webSocket.queuedWriteBytes))
                await webSocket.waitForRoom(atMost: low)
                checkingRoom = false
            case .notOpen:
                throw WebSocketSendError.notOpen  // our close frame went first, or the connection ended
            }
        }
    }

    /// The connection's event loop: the client's reader runs on the thread that decoded the event.
    var preferredExecutor: (any TaskExecutor)? { self.loop.taskExecutor }

    func sendPing(id: UInt64) {
        guard let webSocket = self.slot.webSocket, webSocket.sendPing(id: id) else {
            self.outlet.emitLater(.pingFailed(id: id))  // dropped by the stream once it has finished
            return
        }
    }

    /// What the open connection has received (its driver notes the time of each read, and its engine counts
    /// frames); nil before the open and after the end. Takes the engine's lock once: asked only at a pong deadline.
    func inboundProgress() -> InboundProgress? {
        guard let arrival = self.slot.webSocket?.inboundArrival(now: self.loop.now) else { return nil }
        return InboundProgress(
            framesCompleted: arrival.framesCompleted, frameInProgress: arrival.frameInProgress,
            sinceLastByte: arrival.sinceLastByte, sinceLastFrameCompleted: arrival.sinceLastFrameCompleted,
            latestPongID: arrival.latestPongID, sinceLatestPong: arrival.sinceLatestPong)
    }

    /// The steps so far, read on any thread; final from `.opened` (or an `.ended` before it) on. A connection that
    /// never started (an unsupported request) has none.
    func attemptTimings() -> AttemptTimings? {
        let timings = self.stopwatch.snapshot
        return timings == AttemptTimings() ? nil : timings
    }

    func close(code: UInt16, reason: String) {
        let core = self.core
        self.loop.execute { core.value.close(code: code, reason: reason) }
    }

    /// On the loop's thread (the client delivering directly, as it publishes the message that crossed its
    /// watermark) the hold applies at once, even between two messages of one read; elsewhere on the loop's next turn.
    func holdReading(_ held: Bool) {
        if self.loop.inEventLoop {
            self.core.value.holdReading(held)
        } else {
            let core = self.core
            self.loop.execute { core.value.holdReading(held) }
        }
    }

    /// Runs after an earlier `close` on the loop (`execute` keeps call order), so it sees that close's frame.
    func waitUntilCloseSent() async {
        let core = self.core
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            if !self.loop.execute({ core.value.waitUntilCloseSent(continuation) }) {
                continuation.resume()  // the loop has shut down: nothing is pending any more
            }
        }
    }
}

/// Where a connection's events go: its `events` stream, or a handler called on the loop's thread (see
/// `SocketTransport.connect(_:deliveringOn:_:)`).
/// Like the stream, which drops what is yielded after it finished, a handler hears nothing after `.ended`.
final class EventOutlet: Sendable {
    let sink: AsyncStream<TransportEvent>.Continuation
    let handler: (@Sendable (TransportEvent) -> Void)?
    let loop: EventLoop
    /// Set when `.ended` has been reported to the handler.
    private let ended = Atomic<Bool>(false)

    init(
        sink: AsyncStream<TransportEvent>.Continuation, handler: (@Sendable (TransportEvent) -> Void)?,
        loop: EventLoop
    ) {
        self.sink = sink
        self.handler = handler
        self.loop = loop
    }

    /// Reports `event` now. Loop thread only.
    func emit(_ event: TransportEvent) {
        guard let handler else {
            self.sink.yield(event)
            return
        }
        guard !self.ended.load(ordering: .relaxed) else { return }
        if case .ended = event { self.ended.store(true, ordering: .relaxed) }
        handler(event)
    }

    /// Reports `event` from any thread; a handler hears it on a later turn of the loop, never inside its caller's
    /// own call into the connection.
    func emitLater(_ event: TransportEvent) {
        if self.handler != nil {
            self.loop.execute { self.emit(event) }
        } else {
            self.sink.yield(event)
        }
    }

    func finish() {
        self.sink.finish()
    }
}

/// Where the sending side finds the WebSocket driver: set at the open, cleared when the stream ends (so that a
/// connection that has ended frees its engine). Whether a message may be sent is the engine's answer, not this
/// slot's: it only says whether there is an engine to ask.
final class WebSocketSlot: Sendable {
    private let slot = Mutex<ClientWebSocket?>(nil)

    var webSocket: ClientWebSocket? { self.slot.withLock { $0 } }

    func open(_ webSocket: ClientWebSocket) {
        self.slot.withLock { $0 = webSocket }
    }

    func close() {
        self.slot.withLock { $0 = nil }
    }
}
#endif
