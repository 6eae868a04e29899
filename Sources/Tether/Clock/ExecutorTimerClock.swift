/// A timer that a clock runs on an executor itself: made once, then armed and cancelled any number of times, each
/// arming replacing the one before. `arm` and `cancel` are called on the timer's executor; `cancel` also from a
/// `deinit` elsewhere. Once `arm` or `cancel` returns, an earlier arming never fires.
public protocol ExecutorTimer<Instant>: AnyObject, Sendable {
    associatedtype Instant: InstantProtocol
    /// Fires the timer's work once `deadline` has passed, at most `tolerance` later, unless it is armed again or
    /// cancelled first.
    func arm(at deadline: Instant, tolerance: Duration)
    /// Disarms it. Idempotent; no effect once it fired.
    func cancel()
}

/// A clock that can run a timer on an executor itself, instead of a task sleeping on the clock.
///
/// `WebSocketClient` makes its one wake-up timer with this when its clock conforms and offers a timer on the
/// client's executor; otherwise it sleeps on the clock in a task. On Linux, `ContinuousClock` conforms and times
/// on the client's event loop: arming and cancelling cost an entry in the loop's timer heap, where a sleeping task
/// costs a task and a system timer that, once cancelled (every pong moves the ping deadline), still wakes a thread
/// at its old deadline. The timer is made once per client, so arming it allocates no closure.
public protocol ExecutorTimerClock<Instant>: Clock {
    /// A timer that calls `fire` on `executor`'s thread (isolated to it) each time an arming's deadline passes, or
    /// nil when this clock cannot time on `executor`.
    func makeTimer(
        on executor: any SerialExecutor, _ fire: @escaping @Sendable () -> Void
    ) -> (any ExecutorTimer<Instant>)?
}

/// A client's one wake-up timer on its clock: the clock's own timer on the client's executor when it offers one
/// (`ExecutorTimerClock`), else a task that sleeps on the clock and then enters the actor. Owned by the actor and
/// used only on it.
struct WakeTimer<ClockType: Clock, Owner: Actor> where ClockType.Duration == Duration {
    private let clock: ClockType
    /// Weak: the owner stores this timer.
    private weak var owner: Owner?
    private let fire: @Sendable (isolated Owner) -> Void
    /// The clock's timer on the owner's executor, if the clock offers one (made once).
    private let onExecutor: (any ExecutorTimer<ClockType.Instant>)?
    /// The sleeping task of the current arming, when the clock offers no timer of its own.
    private var sleeper: Task<Void, Never>?
    /// Whether an arming is pending (not fired, not cancelled).
    private(set) var isArmed = false

    /// - Parameters:
    ///   - executor: the executor `owner` runs on, if it has one of its own to time on.
    ///   - fire: called isolated to `owner` when an arming fires; never for an arming replaced or cancelled before.
    init(
        clock: ClockType, executor: (any SerialExecutor)?, owner: Owner,
        _ fire: @escaping @Sendable (isolated Owner) -> Void
    ) {
        self.clock = clock
        self.owner = owner
        self.fire = fire
        if let executor, let clock = clock as? any ExecutorTimerClock<ClockType.Instant> {
            self.onExecutor = clock.makeTimer(on: executor) { [weak owner] in
                owner?.assumeIsolated { fire($0) }
            }
        } else {
            self.onExecutor = nil
        }
    }

    /// Whether the clock times on the owner's executor itself (no task per arming).
    var timesOnExecutor: Bool { self.onExecutor != nil }

    /// Fires once `deadline` has passed (at most `tolerance` later), replacing the previous arming.
    mutating func arm(at deadline: ClockType.Instant, tolerance: Duration) {
        self.isArmed = true
        if let timer = self.onExecutor {
            timer.arm(at: deadline, tolerance: tolerance)
            return
        }
        self.sleeper?.cancel()
        let (clock, owner, fire) = (self.clock, self.owner, self.fire)
        self.sleeper = Task { [weak owner] in
            do {
                try await clock.sleep(until: deadline, tolerance: tolerance)
            } catch {
                return  // cancelled: replaced or disarmed
            }
            guard let owner else { return }
            await Self.fireUnlessCancelled(owner, fire)
        }
    }

    /// The owner calls this when an arming fired, before anything re-arms it.
    mutating func fired() {
        self.isArmed = false
        self.sleeper = nil
    }

    mutating func cancel() {
        self.isArmed = false
        self.onExecutor?.cancel()
        self.sleeper?.cancel()
        self.sleeper = nil
    }

    /// Runs on the owner: a task cancelled (re-armed or disarmed) while it hopped there does not fire. Cancelling
    /// happens on the owner too, so the check and the cancel cannot cross.
    private static func fireUnlessCancelled(_ owner: isolated Owner, _ fire: @Sendable (isolated Owner) -> Void) {
        guard !Task.isCancelled else { return }
        fire(owner)
    }
}
