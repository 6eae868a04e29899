#if os(Linux)
import Foundation
import Synchronization
import Tether

/// The default transport with a log of how each connection ended, for a failure's diagnosis
/// (`TETHER_RANDOMIZED_VERBOSE`): the client's records do not say how a connection it closed ended.
final class UseTransportLog: WebSocketTransport {
    private let inner: any WebSocketTransport
    private let log = UseLog()
    private let count = Atomic<Int>(0)

    init(_ inner: any WebSocketTransport) {
        self.inner = inner
    }

    var lines: [String] { self.log.lines }

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
        let log = self.log
        return self.inner.connect(request, deliveringOn: executor) { event in
            if case .ended(let end) = event {
                log.append("transport connection \(number) ended \(end) after \(started.duration(to: .now))")
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
