import Foundation
import Synchronization

/// The delivery rules every monitor shares: the current snapshot on start, then only changes, nothing after
/// cancel, one handler call at a time and in order.
package final class PathSnapshotDelivery: Sendable {
    private enum Phase {
        case idle
        case running(@Sendable (PathSnapshot) -> Void)
        case cancelled
    }

    private struct State {
        var phase: Phase = .idle
        var current: PathSnapshot?
        var lastDelivered: PathSnapshot?
    }

    /// Held while a handler runs, so that `cancel()` on another thread waits for it; recursive so that the
    /// handler itself may call `cancel()`.
    private let order = NSRecursiveLock()
    private let state = Mutex(State())
    private let filtersRepeats: Bool

    package init(filtersRepeats: Bool = true) {
        self.filtersRepeats = filtersRepeats
    }

    package var isStarted: Bool {
        self.state.withLock { state in
            switch state.phase {
            case .idle: false
            case .running, .cancelled: true
            }
        }
    }

    package var isCancelled: Bool {
        self.state.withLock { state in
            switch state.phase {
            case .idle, .running: false
            case .cancelled: true
            }
        }
    }

    /// Installs the handler and delivers the current snapshot, if one is known yet.
    /// Returns `false` (and installs nothing) when started before or cancelled.
    @discardableResult
    package func start(_ handler: @escaping @Sendable (PathSnapshot) -> Void) -> Bool {
        self.order.lock()
        defer { self.order.unlock() }
        let accepted = self.state.withLock { state in
            switch state.phase {
            case .idle:
                state.phase = .running(handler)
                return true
            case .running, .cancelled:
                return false
            }
        }
        if accepted {
            self.deliverCurrent()
        }
        return accepted
    }

    /// Records the monitor's latest view of the path and delivers it when it is a change.
    package func update(_ snapshot: PathSnapshot) {
        self.order.lock()
        defer { self.order.unlock() }
        self.state.withLock { $0.current = snapshot }
        self.deliverCurrent()
    }

    package func cancel() {
        self.order.lock()
        defer { self.order.unlock() }
        self.state.withLock { $0.phase = .cancelled }
    }

    /// Runs with `order` held.
    private func deliverCurrent() {
        let delivery: (handler: @Sendable (PathSnapshot) -> Void, snapshot: PathSnapshot)? = self.state.withLock {
            state in
            guard case .running(let handler) = state.phase, let current = state.current else { return nil }
            if self.filtersRepeats && state.lastDelivered == current { return nil }
            state.lastDelivered = current
            return (handler, current)
        }
        if let delivery {
            delivery.handler(delivery.snapshot)
        }
    }
}
