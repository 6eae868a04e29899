#if canImport(Network)
import Dispatch
import Network

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
    private let delivery = PathSnapshotDelivery()
    private let lifecycle = OneShotLifecycle<NWPathMonitor>()
    private let queue: DispatchQueue

    /// - Parameter queue: where `NWPathMonitor` runs its handler; defaults to a private serial queue.
    public init(queue: DispatchQueue = DispatchQueue(label: "tether.path-monitor")) {
        self.queue = queue
    }

    public func start(_ handler: @escaping @Sendable (PathSnapshot) -> Void) {
        guard let monitor = self.lifecycle.start(making: { NWPathMonitor() }) else { return }
        self.delivery.start(handler)
        // The update handler is set before `start(queue:)`, so the first path is not missed.
        monitor.pathUpdateHandler = { [delivery] path in
            delivery.update(PathSnapshot(describing: path))
        }
        monitor.start(queue: self.queue)
    }

    public func cancel() {
        let monitor = self.lifecycle.cancel()
        self.delivery.cancel()
        monitor?.cancel()
    }

    deinit {
        self.cancel()
    }
}
#endif
