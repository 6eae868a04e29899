/// The clock a client runs on, with the clock's type erased so that `WebSocketClient` needs no generic parameter:
/// it reads time as integer milliseconds since the client was created (converted here, once per reading) and
/// makes its one wake-up timer. Made once per client; reading it and arming its timer allocate nothing beyond what
/// the clock's own timer does.
protocol ClientClock: Sendable {
    /// Milliseconds since the client was created.
    func now() -> Int
    /// The continuous clock's instant at which the client was created: this clock's own origin when it is the
    /// continuous clock, else the continuous clock's reading then (`ConnectionState.retryInstant` counts from it).
    var continuousOrigin: ContinuousClock.Instant { get }
    /// Sleeps for `duration` on this clock; throws `CancellationError` when the task is cancelled first.
    func sleep(for duration: Duration) async throws
    /// The client's wake-up timer: the clock's own timer on `executor` when it offers one (`ExecutorTimerClock`),
    /// else a task sleeping on the clock per arming. Each arming fires at most `tolerance` late; `fire` runs isolated
    /// to `owner`.
    func makeTimer(
        executor: (any SerialExecutor)?, owner: WebSocketClient, tolerance: Duration,
        _ fire: @escaping @Sendable (isolated WebSocketClient) -> Void
    ) -> any ClientTimer
}

/// The client's clock over `clock`: for the continuous clock (every client that is not given another), a type of
/// its own, not generic, since the client reads it and arms its timer at every event; any other clock through
/// `ClockAdapter`.
func clientClock(for clock: some Clock<Duration>) -> any ClientClock {
    if let continuous = clock as? ContinuousClock {
        return ContinuousClientClock(continuous)
    }
    return ClockAdapter(clock)
}

/// A client's one wake-up timer, armed in the client's milliseconds. Used on the client's actor only.
protocol ClientTimer: Sendable {
    /// Whether an arming is pending (not fired, not cancelled).
    var isArmed: Bool { get }
    /// Fires once `wake` ms have passed since the client was created (at most the timer's tolerance later),
    /// replacing the previous arming.
    mutating func arm(atMilliseconds wake: Int)
    /// The owner calls this when an arming fired, before anything re-arms it.
    mutating func fired()
    mutating func cancel()
}

/// `ClientClock` over a concrete clock, counting from the instant it was made.
struct ClockAdapter<Base: Clock>: ClientClock where Base.Duration == Duration {
    let base: Base
    let origin: Base.Instant
    let continuousOrigin: ContinuousClock.Instant

    init(_ base: Base) {
        self.init(base, origin: base.now)
    }

    init(_ base: Base, origin: Base.Instant) {
        self.base = base
        self.origin = origin
        self.continuousOrigin = origin as? ContinuousClock.Instant ?? .now
    }

    func now() -> Int {
        self.origin.duration(to: self.base.now).milliseconds
    }

    func sleep(for duration: Duration) async throws {
        try await self.base.sleep(until: self.base.now.advanced(by: duration), tolerance: nil)
    }

    func makeTimer(
        executor: (any SerialExecutor)?, owner: WebSocketClient, tolerance: Duration,
        _ fire: @escaping @Sendable (isolated WebSocketClient) -> Void
    ) -> any ClientTimer {
        AdaptedTimer(
            WakeTimer(clock: self.base, executor: executor, owner: owner, fire), origin: self.origin,
            tolerance: tolerance)
    }
}

/// A `WakeTimer` on the concrete clock, armed in milliseconds from `origin`.
private struct AdaptedTimer<Base: Clock>: ClientTimer where Base.Duration == Duration {
    private var timer: WakeTimer<Base, WebSocketClient>
    private let origin: Base.Instant
    private let tolerance: Duration

    init(_ timer: WakeTimer<Base, WebSocketClient>, origin: Base.Instant, tolerance: Duration) {
        self.timer = timer
        self.origin = origin
        self.tolerance = tolerance
    }

    var isArmed: Bool { self.timer.isArmed }

    mutating func arm(atMilliseconds wake: Int) {
        self.timer.arm(at: self.origin.advanced(by: .milliseconds(wake)), tolerance: self.tolerance)
    }

    mutating func fired() { self.timer.fired() }

    mutating func cancel() { self.timer.cancel() }
}

/// `ClientClock` over the continuous clock. Not generic: `ClockAdapter<ContinuousClock>`, reached through the
/// `ClientClock` existential, ran unspecialized, and its timer went through three layers, two of them generic
/// (`AdaptedTimer`, `WakeTimer`), at each arming (docs/benchmarks.md, issue 40).
struct ContinuousClientClock: ClientClock {
    let continuousOrigin: ContinuousClock.Instant

    init(_ clock: ContinuousClock) {
        self.continuousOrigin = clock.now
    }

    func now() -> Int {
        self.continuousOrigin.duration(to: .now).milliseconds
    }

    func sleep(for duration: Duration) async throws {
        try await ContinuousClock().sleep(for: duration)
    }

    /// The clock's own timer on `executor` when it offers one (on Linux, a `LoopTimer` in the event loop's heap),
    /// else the generic path (a task sleeping per arming).
    func makeTimer(
        executor: (any SerialExecutor)?, owner: WebSocketClient, tolerance: Duration,
        _ fire: @escaping @Sendable (isolated WebSocketClient) -> Void
    ) -> any ClientTimer {
        if let executor, let clock = ContinuousClock() as Any as? any ExecutorTimerClock<ContinuousClock.Instant>,
           let timer = clock.makeTimer(on: executor, { [weak owner] in owner?.assumeIsolated { fire($0) } }) {
            return ContinuousExecutorTimer(timer: timer, origin: self.continuousOrigin, tolerance: tolerance)
        }
        return ClockAdapter(ContinuousClock(), origin: self.continuousOrigin)
            .makeTimer(executor: executor, owner: owner, tolerance: tolerance, fire)
    }
}

/// The continuous clock's own timer on the client's executor, armed in milliseconds from the client's origin: one
/// existential call per arming. A replaced or cancelled arming never fires (`ExecutorTimer`).
private struct ContinuousExecutorTimer: ClientTimer {
    let timer: any ExecutorTimer<ContinuousClock.Instant>
    let origin: ContinuousClock.Instant
    let tolerance: Duration
    private(set) var isArmed = false

    init(timer: any ExecutorTimer<ContinuousClock.Instant>, origin: ContinuousClock.Instant, tolerance: Duration) {
        self.timer = timer
        self.origin = origin
        self.tolerance = tolerance
    }

    mutating func arm(atMilliseconds wake: Int) {
        self.isArmed = true
        self.timer.arm(at: self.origin + .milliseconds(wake), tolerance: self.tolerance)
    }

    mutating func fired() {
        self.isArmed = false
    }

    mutating func cancel() {
        self.isArmed = false
        self.timer.cancel()
    }
}
