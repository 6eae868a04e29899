#if os(Linux)
import Synchronization
import TetherPOSIX

/// On Linux the continuous clock times on an `EventLoop` with the loop's timer heap: a client on its
/// configuration's event loop arms its wake-up timer there, and the timer enters the client with a direct call.
extension ContinuousClock: ExecutorTimerClock {
    /// A timer in `executor`'s timer heap when it is an `EventLoop` (`EventLoop.schedule(at:leeway:_:)`, with the
    /// tolerance as the leeway); nil for any other executor.
    public func makeTimer(
        on executor: any SerialExecutor, _ fire: @escaping @Sendable () -> Void
    ) -> (any ExecutorTimer<Instant>)? {
        guard let loop = executor as? EventLoop else { return nil }
        return LoopTimer(loop: loop, fire: fire)
    }
}

/// A re-armable timer in an event loop's timer heap. Each arming schedules the same `fire` closure (no closure is
/// made per arming) and cancels the previous entry, which then never runs.
private final class LoopTimer: ExecutorTimer {
    private let loop: EventLoop
    private let fire: @Sendable () -> Void
    /// The pending entry. Armed on the loop; a lock because `cancel` may come from a `deinit` on another thread.
    private let pending = Mutex<TimerHandle?>(nil)

    init(loop: EventLoop, fire: @escaping @Sendable () -> Void) {
        self.loop = loop
        self.fire = fire
    }

    func arm(at deadline: ContinuousClock.Instant, tolerance: Duration) {
        let handle = self.loop.schedule(at: deadline, leeway: tolerance, self.fire)
        self.pending.withLock { pending in
            pending?.cancel()
            pending = handle
        }
    }

    func cancel() {
        self.pending.withLock { pending in
            pending?.cancel()
            pending = nil
        }
    }
}
#endif
