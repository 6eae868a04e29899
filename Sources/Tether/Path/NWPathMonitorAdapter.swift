#if canImport(Network)
import Dispatch
import Network
import Synchronization

// Only names Network's cases; the mapping to a snapshot is `PathSnapshot(describing:)`, tested on Linux.
extension NWPath: PathDescribing {
    public var knownStatus: PathStatus? {
        switch self.status {
        case .satisfied: .satisfied
        case .unsatisfied: .unsatisfied
        case .requiresConnection: .requiresConnection
        @unknown default: nil
        }
    }

    public var interfaceKinds: [InterfaceKind] {
        self.availableInterfaces.map { interface in
            switch interface.type {
            case .wifi: .wifi
            case .cellular: .cellular
            case .wiredEthernet: .wiredEthernet
            case .loopback: .loopback
            case .other: .other
            @unknown default: .other
            }
        }
    }

    public var interfaceNames: [String] {
        self.availableInterfaces.map(\.name)
    }
}

/// A `PathMonitor` backed by `NWPathMonitor`. One-shot like `NWPathMonitor`: each adapter creates its own
/// `NWPathMonitor` when started, and a cancelled adapter cannot restart — create a new adapter.
public final class NWPathMonitorAdapter: PathMonitor {
    private enum Phase {
        case idle
        case running(NWPathMonitor)
        case cancelled
    }

    private let delivery = PathSnapshotDelivery()
    private let phase = Mutex(Phase.idle)
    private let queue: DispatchQueue

    /// - Parameter queue: where `NWPathMonitor` runs its handler; defaults to a private serial queue.
    public init(queue: DispatchQueue = DispatchQueue(label: "tether.path-monitor")) {
        self.queue = queue
    }

    public func start(_ handler: @escaping @Sendable (PathSnapshot) -> Void) {
        let monitor = NWPathMonitor()
        let accepted = self.phase.withLock { phase in
            guard case .idle = phase else { return false }
            phase = .running(monitor)
            return true
        }
        guard accepted else { return }
        self.delivery.start(handler)
        // The update handler is set before `start(queue:)`, so the first path is not missed.
        monitor.pathUpdateHandler = { [delivery] path in
            delivery.update(PathSnapshot(describing: path))
        }
        monitor.start(queue: self.queue)
    }

    public func cancel() {
        let monitor: NWPathMonitor? = self.phase.withLock { phase in
            defer { phase = .cancelled }
            guard case .running(let monitor) = phase else { return nil }
            return monitor
        }
        self.delivery.cancel()
        monitor?.cancel()
    }

    deinit {
        self.cancel()
    }
}
#endif
