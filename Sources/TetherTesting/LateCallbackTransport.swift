import Foundation
import Synchronization
import Tether
import TetherCore

/// A transport wrapper that can replay "late callbacks" into connections the client already left behind.
///
/// Real platforms deliver queued callbacks after a task was cancelled (docs/ARCHITECTURE.md §2). This wrapper makes
/// that reproducible over a real transport: it forwards each inner connection's events unchanged, but
/// keeps the stream the client reads open after the inner connection ended, so that `inject(_:into:)`
/// can deliver, say, an `.opened`, a `.pong` or a `.ended(.peerClosed)` on an old connection while a newer
/// one is open. `release()` finishes every held stream; call it before `stop()` returns are awaited.
/// Used by the acceptance tests and `tether check`.
public final class LateCallbackTransport: WebSocketTransport {
    private let inner: any WebSocketTransport
    private let connections = Mutex<[LateCallbackConnection]>([])

    /// - Parameter inner: the transport that makes the real connections.
    public init(wrapping inner: any WebSocketTransport) {
        self.inner = inner
    }

    public func connect(_ request: TransportRequest) -> any TransportConnection {
        let connection = LateCallbackConnection(inner: self.inner.connect(request))
        self.connections.withLock { $0.append(connection) }
        return connection
    }

    /// How many connections were made so far; connection `n` (0-based) belongs to the n-th attempt.
    public var connectionCount: Int { self.connections.withLock { $0.count } }

    /// Delivers `event` on the stream of the `index`-th connection (0-based), even if it already ended.
    /// Returns false if that stream was already released.
    @discardableResult
    public func inject(_ event: TransportEvent, into index: Int) -> Bool {
        let connection = self.connections.withLock { $0.indices.contains(index) ? $0[index] : nil }
        return connection?.inject(event) ?? false
    }

    /// Finishes every held stream, so that the client's readers end.
    public func release() {
        for connection in self.connections.withLock({ $0 }) {
            connection.release()
        }
    }
}

final class LateCallbackConnection: TransportConnection {
    let events: AsyncStream<TransportEvent>
    private let sink: AsyncStream<TransportEvent>.Continuation
    private let inner: any TransportConnection
    private let forwarder: Task<Void, Never>

    init(inner: any TransportConnection) {
        let (events, sink) = AsyncStream.makeStream(of: TransportEvent.self, bufferingPolicy: .unbounded)
        self.inner = inner
        self.events = events
        self.sink = sink
        // Forwards the real events; the outer stream stays open after the inner one ends.
        self.forwarder = Task {
            for await event in inner.events {
                sink.yield(event)
            }
        }
    }

    deinit {
        self.forwarder.cancel()
        self.sink.finish()
    }

    func inject(_ event: TransportEvent) -> Bool {
        if case .terminated = self.sink.yield(event) { return false }
        return true
    }

    func release() {
        self.sink.finish()
    }

    nonisolated(nonsending) func send(_ message: WebSocketMessage) async throws { try await self.inner.send(message) }
    func sendPing(id: UInt64) { self.inner.sendPing(id: id) }
    func close(code: UInt16, reason: String) { self.inner.close(code: code, reason: reason) }
    func waitUntilCloseSent() async { await self.inner.waitUntilCloseSent() }
    func holdReading(_ held: Bool) { self.inner.holdReading(held) }
}
