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
    /// else a task sleeping on the clock per arming. `fire` runs isolated to `owner`.
    func makeTimer(
        executor: (any SerialExecutor)?, owner: WebSocketClient,
        _ fire: @escaping @Sendable (isolated WebSocketClient) -> Void
    ) -> any ClientTimer
}

/// A client's one wake-up timer, armed in the client's milliseconds. Used on the client's actor only.
protocol ClientTimer: Sendable {
    /// Whether an arming is pending (not fired, not cancelled).
    var isArmed: Bool { get }
    /// Fires once `wake` ms have passed since the client was created (at most `tolerance` later), replacing the
    /// previous arming.
    mutating func arm(atMilliseconds wake: Int, tolerance: Duration)
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
        self.base = base
        self.origin = base.now
        self.continuousOrigin = self.origin as? ContinuousClock.Instant ?? .now
    }

    func now() -> Int {
        self.origin.duration(to: self.base.now).milliseconds
    }

    func sleep(for duration: Duration) async throws {
        try await self.base.sleep(until: self.base.now.advanced(by: duration), tolerance: nil)
    }

    func makeTimer(
        executor: (any SerialExecutor)?, owner: WebSocketClient,
        _ fire: @escaping @Sendable (isolated WebSocketClient) -> Void
    ) -> any ClientTimer {
        AdaptedTimer(WakeTimer(clock: self.base, executor: executor, owner: owner, fire), origin: self.origin)
    }
}

/// A `WakeTimer` on the concrete clock, armed in milliseconds from `origin`.
private struct AdaptedTimer<Base: Clock>: ClientTimer where Base.Duration == Duration {
    private var timer: WakeTimer<Base, WebSocketClient>
    private let origin: Base.Instant

    init(_ timer: WakeTimer<Base, WebSocketClient>, origin: Base.Instant) {
        self.timer = timer
        self.origin = origin
    }

    var isArmed: Bool { self.timer.isArmed }

    mutating func arm(atMilliseconds wake: Int, tolerance: Duration) {
        self.timer.arm(at: self.origin.advanced(by: .milliseconds(wake)), tolerance: tolerance)
    }

    mutating func fired() { self.timer.fired() }

    mutating func cancel() { self.timer.cancel() }
}
