/// How long to wait before the next connection attempt: exponential growth, jitter, a cap.
///
/// The exponential value for the `n`-th consecutive failure (n >= 1) is `base * (factorPercent / 100)^(n-1)` (each
/// step rounded down to a whole millisecond), capped at `cap`. The delay is drawn uniformly from a range that ends at
/// the exponential value plus `jitterPercent` % of it, or at `cap` when that is lower, and spans `jitterPercent`
/// parts in `100 + jitterPercent` of its end: below the cap that is `exponential ... exponential * (1 + j)` (0–50 %
/// added, by default); at the cap it is `cap / (1 + j) ... cap` (40–60 s, by default). So no delay exceeds `cap`,
/// and retries that reached the cap keep spreading instead of all waiting exactly `cap` (a cap applied after the
/// jitter would give every such client the same period, so clients that failed together retry together forever).
/// `base` and `cap` count in whole milliseconds (rounded down), converted once (`Backoff`), so a seeded generator
/// gives an exact, reproducible sequence.
public struct BackoffPolicy: Equatable, Hashable, Sendable {
    /// The delay before jitter after the first failure. Default 1 s; at least 0.
    public var base: Duration
    /// The growth per further failure in percent: 200 doubles, 150 is the common ×1.5. Default 200. Integer
    /// percent keeps the sequence exact.
    public var factorPercent: Int
    /// The growth factor per further failure, in whole numbers (`factorPercent / 100`); setting it sets
    /// `factorPercent` to a multiple of 100.
    public var factor: Int {
        get { self.factorPercent / 100 }
        set { self.factorPercent = newValue.multipliedReportingOverflow(by: 100).overflow ? .max : newValue * 100 }
    }
    /// No delay exceeds this, jitter included; delays at the cap are drawn below it. Default 60 s; at least 0.
    public var cap: Duration
    /// The jitter adds 0...`jitterPercent` % of the exponential value below the cap; at the cap the delay is drawn
    /// from the same relative range ending at the cap. Default 50 (spreads a thundering herd).
    public var jitterPercent: Int

    /// - Parameters:
    ///   - base: delay before jitter after the first failure (default 1 s).
    ///   - factor: growth per further failure (default 2).
    ///   - cap: the largest delay, jitter included (default 60 s).
    ///   - jitterPercent: jitter adds 0...jitterPercent % below the cap, and spreads the delays at the cap as
    ///     widely (default 50; 0 disables jitter).
    ///
    /// Stored as given and checked where it is used (`isValid`): `Backoff` requires a valid policy, and
    /// `WebSocketClient` reports an invalid one as a typed configuration error.
    public init(
        base: Duration = .seconds(1), factor: Int = 2, cap: Duration = .seconds(60), jitterPercent: Int = 50
    ) {
        self.base = base
        self.factorPercent = 0
        self.cap = cap
        self.jitterPercent = jitterPercent
        self.factor = factor
    }

    /// A policy with a fractional growth: `factorPercent: 150` multiplies by 1.5 per failure.
    public init(
        base: Duration = .seconds(1), factorPercent: Int, cap: Duration = .seconds(60), jitterPercent: Int = 50
    ) {
        self.base = base
        self.factorPercent = factorPercent
        self.cap = cap
        self.jitterPercent = jitterPercent
    }

    /// `base` and `cap` in milliseconds, as they were before they became `Duration`s.
    @available(*, deprecated, message: "base and cap are Durations: BackoffPolicy(base: .seconds(1))")
    public init(base: Int, factor: Int = 2, cap: Int = 60_000, jitterPercent: Int = 50) {
        self.init(base: .milliseconds(base), factor: factor, cap: .milliseconds(cap), jitterPercent: jitterPercent)
    }

    /// `base` and `cap` in milliseconds, as they were before they became `Duration`s.
    @available(*, deprecated, message: "base and cap are Durations: BackoffPolicy(base: .seconds(1))")
    public init(base: Int, factorPercent: Int, cap: Int = 60_000, jitterPercent: Int = 50) {
        self.init(
            base: .milliseconds(base), factorPercent: factorPercent, cap: .milliseconds(cap),
            jitterPercent: jitterPercent)
    }

    /// The first field out of range, named as spelled here (`base`, `factor`, `factorPercent`, `cap`,
    /// `jitterPercent`), with what it must be and the value it had; nil when every field is in range: `base` and
    /// `cap` at least 0, the growth at least ×1 (`factor` 1, `factorPercent` 100; named `factor` when set as a whole
    /// number), `jitterPercent` at least 0.
    public var fieldOutOfRange: SettingOutOfRange? {
        if self.base < .zero {
            return SettingOutOfRange(setting: "base", requirement: "at least 0", value: "\(self.base)")
        }
        if self.factorPercent % 100 == 0, self.factor < 1 {
            return SettingOutOfRange(setting: "factor", requirement: "at least 1", value: "\(self.factor)")
        }
        if self.factorPercent < 100 {
            return SettingOutOfRange(
                setting: "factorPercent", requirement: "at least 100", value: "\(self.factorPercent)")
        }
        if self.cap < .zero {
            return SettingOutOfRange(setting: "cap", requirement: "at least 0", value: "\(self.cap)")
        }
        if self.jitterPercent < 0 {
            return SettingOutOfRange(
                setting: "jitterPercent", requirement: "at least 0", value: "\(self.jitterPercent)")
        }
        return nil
    }

    /// Whether every field is in range (see `fieldOutOfRange`).
    public var isValid: Bool { self.fieldOutOfRange == nil }

    /// The exponential value before jitter for failure number `attempt` (1-based), saturated at `cap`.
    public func exponentialDelay(attempt: Int) -> Duration {
        .milliseconds(BackoffSteps(self).exponentialDelay(attempt: attempt))
    }

    /// The delay after failure number `attempt` (1-based; values below 1 count as 1): drawn from
    /// `delayRange(attempt:)`, in whole milliseconds.
    public func delay(attempt: Int, using random: inout some RandomNumberGenerator) -> Duration {
        .milliseconds(BackoffSteps(self).delay(attempt: attempt, using: &random))
    }

    /// The range the delay after failure number `attempt` is drawn from: `exponential ... exponential + jitter`
    /// below the cap, `cap * 100 / (100 + jitterPercent) ... cap` where that would pass the cap.
    public func delayRange(attempt: Int) -> ClosedRange<Duration> {
        let range = BackoffSteps(self).delayRange(attempt: attempt)
        return Duration.milliseconds(range.lowerBound)...Duration.milliseconds(range.upperBound)
    }
}

/// A consecutive-failure counter with its policy: each failure yields the next delay; `reset()` after a
/// connection proved healthy (not merely opened).
public struct Backoff: Equatable, Hashable, Sendable {
    public let policy: BackoffPolicy
    /// The policy in milliseconds, converted once.
    private let steps: BackoffSteps
    /// Failures since the last reset.
    public private(set) var attempts = 0

    /// - Precondition: `policy.isValid`.
    public init(policy: BackoffPolicy = BackoffPolicy()) {
        precondition(policy.isValid, "invalid BackoffPolicy: \(policy)")
        self.policy = policy
        self.steps = BackoffSteps(policy)
    }

    /// Counts one more failure and returns how long to wait before the next attempt, in whole milliseconds (the
    /// unit the session machine counts in).
    public mutating func nextDelay(using random: inout some RandomNumberGenerator) -> Int {
        self.attempts += 1
        return self.steps.delay(attempt: self.attempts, using: &random)
    }

    /// The connection proved healthy: the next failure starts from `base` again.
    public mutating func reset() {
        self.attempts = 0
    }
}
