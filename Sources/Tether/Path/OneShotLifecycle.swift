import Synchronization

/// The lifecycle of a platform monitor that, like `NWPathMonitor`, runs at most once: idle until started, running with
/// the monitor it made, cancelled for good. The Apple adapter is a thin shell over this, so that the rules (a second
/// start does nothing, a start after cancel does nothing, cancel hands back the running monitor exactly once) are
/// tested on Linux.
final class OneShotLifecycle<Monitor: Sendable>: Sendable {
    private enum Phase {
        case idle
        case running(Monitor)
        case cancelled
    }

    private let phase = Mutex(Phase.idle)

    /// Makes and keeps the monitor if idle, and returns it for the caller to start; nil (nothing made) otherwise.
    func start(making make: () -> Monitor) -> Monitor? {
        self.phase.withLock { phase in
            guard case .idle = phase else { return nil }
            let monitor = make()
            phase = .running(monitor)
            return monitor
        }
    }

    /// Moves to cancelled for good; returns the running monitor for the caller to cancel, exactly once.
    func cancel() -> Monitor? {
        self.phase.withLock { phase in
            defer { phase = .cancelled }
            guard case .running(let monitor) = phase else { return nil }
            return monitor
        }
    }
}
