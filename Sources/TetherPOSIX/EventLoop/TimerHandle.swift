import Synchronization

/// One scheduled piece of work (a one-shot timer, `EventLoop.schedule`). Whoever takes `work` first — the loop firing
/// it or `cancel` — decides its fate, so a cancelled timer never runs and a fired one is never "cancelled".
final class ScheduledTimer: Sendable {
    let deadline: ContinuousClock.Instant
    /// How much later than `deadline` the timer may fire, so that the loop can fire timers that are close
    /// together on one wake-up.
    let leeway: Duration
    /// Breaks ties between equal deadlines: earlier `schedule` calls fire first.
    let sequence: UInt64
    private let work: Mutex<(@Sendable () -> Void)?>

    init(
        deadline: ContinuousClock.Instant, leeway: Duration = .zero, sequence: UInt64,
        work: @escaping @Sendable () -> Void
    ) {
        self.deadline = deadline
        self.leeway = max(leeway, .zero)
        self.sequence = sequence
        self.work = Mutex(work)
    }

    /// Takes the work out; `nil` if it was already taken (fired or cancelled).
    func take() -> (@Sendable () -> Void)? {
        self.work.withLock { work in
            let taken = work
            work = nil
            return taken
        }
    }

    var isPending: Bool { self.work.withLock { $0 != nil } }
}

/// A timer scheduled with `EventLoop.schedule`. Cancel it from any thread.
package struct TimerHandle: Hashable, Sendable {
    let timer: ScheduledTimer

    /// When the timer fires (or would have).
    package var deadline: ContinuousClock.Instant { self.timer.deadline }

    /// Prevents the work from running and releases it. Returns `true` if this call stopped it,
    /// `false` if it already ran, is running, or was cancelled before.
    @discardableResult
    package func cancel() -> Bool {
        self.timer.take() != nil
    }

    package static func == (lhs: TimerHandle, rhs: TimerHandle) -> Bool { lhs.timer === rhs.timer }
    package func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self.timer)) }
}
