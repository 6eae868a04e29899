#if os(Linux)
import Foundation
import Synchronization
import Tether

/// The default transport, passed through (its direct delivery on the client's loop included), counting the
/// connections that opened (each reached the server: the round waits for the server to see each one end) and
/// logging how each ended, for a failure's diagnosis: the client's records do not say how a connection it closed
/// ended.
final class UseTransport: WebSocketTransport {
    private let inner: any WebSocketTransport
    private let log = UseLog()
    private let count = Atomic<Int>(0)
    private let openedCount = Atomic<Int>(0)

    init(_ inner: any WebSocketTransport) {
        self.inner = inner
    }

    var lines: [String] { self.log.lines }

    /// Adds a line of the round's own to the log (when a step ran and how long it took).
    func note(_ line: String) {
        self.log.append(line)
    }
    /// Connections that reported `.opened`.
    var opened: Int { self.openedCount.load(ordering: .relaxed) }

    func connect(_ request: TransportRequest) -> any TransportConnection {
        self.inner.connect(request)
    }

    func checkSupport(of request: TransportRequest) throws(WebSocketConfigurationError) {
        try self.inner.checkSupport(of: request)
    }

    func connect(
        _ request: TransportRequest, deliveringOn executor: any SerialExecutor,
        _ handler: @escaping @Sendable (TransportEvent) -> Void
    ) -> (any TransportConnection)? {
        let number = self.count.add(1, ordering: .relaxed).newValue
        let started = ContinuousClock.now
        return self.inner.connect(request, deliveringOn: executor) { [self] event in
            switch event {
            case .opened: self.openedCount.add(1, ordering: .relaxed)
            case .ended(let end):
                self.log.append("transport connection \(number) ended \(end) after \(started.duration(to: .now))")
            default: break
            }
            handler(event)
        }
    }
}
final class UseLog: Sendable {
    private let state = Mutex<[String]>([])

    var lines: [String] { self.state.withLock { $0 } }

    func append(_ line: String) {
        self.state.withLock { $0.append(line) }
    }
}
#endif
