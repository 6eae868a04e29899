#if os(Linux)
import TetherPOSIX

/// On Linux the continuous clock times on an `EventLoop` with the loop's timer heap: a client on its
/// configuration's event loop arms its wake-up timer there, and the timer enters the client with a direct call.
extension ContinuousClock: ExecutorTimerClock {
    /// A timer in `executor`'s timer heap when it is an `EventLoop` (a `LoopTimer`, with the tolerance as the
    /// leeway); nil for any other executor.
    public func makeTimer(
        on executor: any SerialExecutor, _ fire: @escaping @Sendable () -> Void
    ) -> (any ExecutorTimer<Instant>)? {
        guard let loop = executor as? EventLoop else { return nil }
        return loop.makeTimer(fire)
    }
}

/// The loop's re-armable timer is the client's: made once, each arming moves its one entry in the loop's heap in
/// place (no allocation per arming, and the arming it replaced leaves nothing in the heap).
extension LoopTimer: ExecutorTimer {
    public typealias Instant = ContinuousClock.Instant

    public func arm(at deadline: ContinuousClock.Instant, tolerance: Duration) {
        self.arm(at: deadline, leeway: tolerance)
    }
}
#endif
