#if os(Linux)
import Foundation
import Synchronization
import TetherCore
import TetherPOSIX
import TetherWire

/// One connection made by `SocketTransport`.
///
/// Thread confinement: the protocol state (phase, handshake parser, frame decoder, timers) lives in a
/// `SocketConnectionCore` wrapped in a `LoopBound` of the connection's event loop, and is touched only on that
/// loop's single thread. The TCP callbacks and timers run there by construction; `close` and
/// `waitUntilCloseSent` hop there with `EventLoop.execute`, which runs work in call order. `LoopBound` checks the
/// thread on every access, so a mistake traps instead of racing.
///
/// Sending does not hop: `send` and `sendPing` encode (and mask) the frame on the caller's thread and hand it to
/// `TCPConnection` (through `TLSStream`, which encrypts it on the caller's thread too, for `wss://`), which writes it
/// to the kernel at once when nothing is queued. What they share with the loop
/// is the `OpenWire` (the open TCP connection and the outstanding ping ids, under a lock). The core's close
/// frame is a sealing write, so no data frame can follow it on the wire, however a send races a close.
final class SocketConnection: TransportConnection {
    let events: AsyncStream<TransportEvent>
    private let loop: EventLoop
    private let core: LoopBound<SocketConnectionCore>
    private let wire = OpenWire()
    private let outlet: EventOutlet
    /// The largest message `send` accepts (the request's `maximumMessageSize`).
    private let sendLimit: Int
    /// The write queue's levels, where `send` waits for room.
    private let outbound: Watermarks

    /// What flow control did, for tests.
    private let flowObserver: (@Sendable (FlowObservation) -> Void)?

    /// - Parameters:
    ///   - handler: see `SocketTransport.connect(_:deliveringOn:_:)`; nil: events go to `events`.
    ///   - flowObserver: told when flow control acts (tests check the bounds with it).
    init(
        request: TransportRequest, loop: EventLoop, dialer: SocketDialer = .direct,
        handler: (@Sendable (TransportEvent) -> Void)? = nil,
        flowObserver: (@Sendable (FlowObservation) -> Void)? = nil
    ) {
        self.flowObserver = flowObserver
        let (events, sink) = AsyncStream.makeStream(of: TransportEvent.self, bufferingPolicy: .unbounded)
        self.events = events
        self.loop = loop
        let outlet = EventOutlet(sink: sink, handler: handler, loop: loop)
        self.outlet = outlet
        self.sendLimit = request.maximumMessageSize
        self.outbound = request.outboundWatermarks
        let core = SocketConnectionCore(
            request: request, outlet: outlet, loop: loop, wire: self.wire, dialer: dialer,
            flowObserver: flowObserver
        )
        self.core = LoopBound(core, loop: loop)
        switch SocketEndpoint.make(for: request) {
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
        var encoder = WebSocketEncoder(role: .client, random: MaskingEntropy())
        var frame: [UInt8] = []
        switch message {
        case .text(let text):
            let size = text.utf8.count
            guard size <= self.sendLimit else {
                throw WebSocketSendError.messageTooLarge(size: size, limit: self.sendLimit)
            }
            frame.reserveCapacity(size + FrameSize.maximumClientHeader)
            encoder.text(text, into: &frame)
        case .binary(let data):
            guard data.count <= self.sendLimit else {
                throw WebSocketSendError.messageTooLarge(size: data.count, limit: self.sendLimit)
            }
            frame.reserveCapacity(data.count + FrameSize.maximumClientHeader)
            data.withUnsafeBytes { encoder.encode(.binary, payload: $0, into: &frame) }
        }
        guard let stream = self.wire.connection else { throw WebSocketSendError.notOpen }
        let queued = stream.queuedWriteBytes
        if queued > self.outbound.high {
            // Above the high watermark: wait for the queue to be down to the low one (or for the end).
            self.flowObserver?(.sendWaitingForRoom(queuedBytes: queued))
            await withCheckedContinuation { (room: CheckedContinuation<Void, Never>) in
                stream.whenQueuedWrites(atMost: self.outbound.low) { room.resume() }
            }
            guard self.wire.connection === stream else { throw WebSocketSendError.notOpen }
        }
        do {
            try await stream.send(frame, sealing: false)
        } catch .closed {
            throw WebSocketSendError.notOpen  // our close frame went first, or the connection just ended
        } catch {
            throw WebSocketSendError.connectionFailed
        }
    }

    /// The connection's event loop: the client's reader runs on the thread that decoded the event.
    var preferredExecutor: (any TaskExecutor)? { self.loop }

    func sendPing(id: UInt64) {
        guard let stream = self.wire.connectionRecordingPing(id) else {
            self.outlet.emitLater(.pingFailed(id: id))  // dropped by the stream once it has finished
            return
        }
        var encoder = WebSocketEncoder(role: .client, random: MaskingEntropy())
        var frame: [UInt8] = []
        frame.reserveCapacity(2 + 4 + 8)
        do {
            try withUnsafeBytes(of: id.bigEndian) { payload throws(WireUsageError) in
                try encoder.ping(payload, into: &frame)
            }
        } catch {
            preconditionFailure("an 8-byte ping payload is always valid: \(error)")
        }
        let wire = self.wire
        let outlet = self.outlet
        stream.write(frame) { _ in  // on the loop thread, on a later turn
            if wire.forgetPing(id) { outlet.emit(.pingFailed(id: id)) }
        }
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

/// What the sending side shares with the loop: the TCP connection while the WebSocket connection is open, and
/// the ids of pings sent and not yet answered (oldest first).
final class OpenWire: Sendable {
    private struct State {
        var connection: (any ByteStream)?
        var outstandingPings: [UInt64] = []
    }

    private let state = Mutex(State())

    /// The TCP connection, while open.
    var connection: (any ByteStream)? { self.state.withLock { $0.connection } }

    /// The handshake completed: data may be sent on `connection`.
    func open(_ connection: any ByteStream) {
        self.state.withLock { $0.connection = connection }
    }

    /// No more sending: our close frame went out, or the end is decided.
    func closeForSending() {
        self.state.withLock { $0.connection = nil }
    }

    /// The TCP connection to write a ping to, with `id` recorded as outstanding first (so that its pong, read
    /// on the loop, always finds it); nil when not open.
    func connectionRecordingPing(_ id: UInt64) -> (any ByteStream)? {
        self.state.withLock { state in
            guard let connection = state.connection else { return nil }
            state.outstandingPings.append(id)
            return connection
        }
    }

    /// Removes `id` from the outstanding pings; `false` if it was not there (answered, repeated, or failed).
    func forgetPing(_ id: UInt64) -> Bool {
        self.state.withLock { state in
            guard let index = state.outstandingPings.firstIndex(of: id) else { return false }
            state.outstandingPings.remove(at: index)
            return true
        }
    }

    /// Closes for sending and returns the pings still outstanding, which now fail.
    func end() -> [UInt64] {
        self.state.withLock { state in
            state.connection = nil
            let pings = state.outstandingPings
            state.outstandingPings.removeAll()
            return pings
        }
    }
}

enum FrameSize {
    /// 2 bytes of header, 8 of extended length, 4 of masking key.
    static let maximumClientHeader = 14
}
#endif
