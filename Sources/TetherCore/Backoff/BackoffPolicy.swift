/// How long to wait before the next connection attempt: exponential growth, jitter, a cap.
///
/// The exponential value for the `n`-th consecutive failure (n >= 1) is `base * (factorPercent / 100)^(n-1)` (each
/// step rounded down to a whole millisecond), capped at `cap`. The delay is drawn uniformly from a range that ends at
/// the exponential value plus `jitterPercent` % of it, or at `cap` when that is lower, and spans `jitterPercent`
/// parts in `100 + jitterPercent` of its end: below the cap that is `exponential ... exponential * (1 + j)` (0–50 %
/// added, by default); at the cap it is `cap / (1 + j) ... cap` (40–60 s, by default). So no delay exceeds `cap`,
/// and retries that reached the cap keep spreading instead of all waiting exactly `cap` (a cap applied after the
/// jitter would give every such client the same period, so clients that failed together retry together forever).
/// All times are integer milliseconds, so a seeded generator gives an exact, reproducible sequence.
public struct BackoffPolicy: Equatable, Hashable, Sendable {
    /// The delay before jitter after the first failure. Default 1000 ms.
    public var base: Int
    /// The growth per further failure in percent: 200 doubles, 150 is the common ×1.5. Default 200. Integer
    /// percent keeps the sequence exact.
    public var factorPercent: Int
    /// The growth factor per further failure, in whole numbers (`factorPercent / 100`); setting it sets
    /// `factorPercent` to a multiple of 100.
    public var factor: Int {
        get { self.factorPercent / 100 }
        set { self.factorPercent = newValue.multipliedReportingOverflow(by: 100).overflow ? .max : newValue * 100 }
    }
    /// No delay exceeds this, jitter included; delays at the cap are drawn below it. Default 60000 ms.
    public var cap: Int
    /// The jitter adds 0...`jitterPercent` % of the exponential value below the cap; at the cap the delay is drawn
    /// from the same relative range ending at the cap. Default 50 (spreads a thundering herd).
    public var jitterPercent: Int

    /// - Parameters:
    ///   - base: delay before jitter after the first failure, in ms (default 1000).
    ///   - factor: growth per further failure (default 2).
    ///   - cap: the largest delay, jitter included, in ms (default 60000).
    ///   - jitterPercent: jitter adds 0...jitterPercent % below the cap, and spreads the delays at the cap as
    ///     widely (default 50; 0 disables jitter).
    ///
    /// Stored as given and checked where it is used (`isValid`): `Backoff` requires a valid policy, and
    /// `WebSocketClient` reports an invalid one as a typed configuration error.
    public init(base: Int = 1_000, factor: Int = 2, cap: Int = 60_000, jitterPercent: Int = 50) {
        self.base = base
        self.factorPercent = 0
        self.cap = cap
        self.jitterPercent = jitterPercent
        self.factor = factor
    }

    /// A policy with a fractional growth: `factorPercent: 150` multiplies by 1.5 per failure.
    public init(base: Int = 1_000, factorPercent: Int, cap: Int = 60_000, jitterPercent: Int = 50) {
        self.base = base
        self.factorPercent = factorPercent
        self.cap = cap
        self.jitterPercent = jitterPercent
    }

    /// The first field out of range, its value and the least value it may take; nil when every field is in
    /// range: `base`, `cap` and `jitterPercent` at least 0, the growth at least ×1 (`factor` 1, `factorPercent` 100;
    /// named `factor` when set as a whole number).
    public var fieldOutOfRange: (name: String, value: Int, minimum: Int)? {
        let growth = self.factorPercent % 100 == 0
            ? ("factor", self.factor, 1) : ("factorPercent", self.factorPercent, 100)
        let fields = [
            ("base", self.base, 0), growth, ("cap", self.cap, 0),
            ("jitterPercent", self.jitterPercent, 0),
        ]
        return fields.first { $0.1 < $0.2 }.map { (name: $0.0, value: $0.1, minimum: $0.2) }
    }

    /// Whether every field is in range (see `fieldOutOfRange`).
    public var isValid: Bool { self.fieldOutOfRange == nil }

    /// The exponential value before jitter for failure number `attempt` (1-based), saturated at `cap`.
    public func exponentialDelay(attempt: Int) -> Int {
        var delay = self.base
        var step = 1
        while step < attempt && delay < self.cap {
            let (product, overflow) = delay.multipliedReportingOverflow(by: self.factorPercent)
            delay = overflow ? self.cap : product / 100
            step += 1
        }
        return min(delay, self.cap)
    }

    /// The delay in ms after failure number `attempt` (1-based; values below 1 count as 1): drawn from
    /// `delayRange(attempt:)`.
    public func delay(attempt: Int, using random: inout some RandomNumberGenerator) -> Int {
        let range = self.delayRange(attempt: attempt)
        return range.lowerBound == range.upperBound ? range.lowerBound : Int.random(in: range, using: &random)
    }

    /// The range the delay after failure number `attempt` is drawn from: `exponential ... exponential + jitter`
    /// below the cap, `cap * 100 / (100 + jitterPercent) ... cap` where that would pass the cap.
    public func delayRange(attempt: Int) -> ClosedRange<Int> {
        let exponential = self.exponentialDelay(attempt: max(attempt, 1))
        let maximumJitter = Self.percent(self.jitterPercent, of: exponential)
        let (jittered, overflow) = exponential.addingReportingOverflow(maximumJitter)
        guard overflow || jittered > self.cap else { return exponential...jittered }
        // At the cap: the same relative spread, ending at the cap (drawn after capping, so that it spreads).
        let (parts, partsOverflow) = self.jitterPercent.addingReportingOverflow(100)
        let lower = partsOverflow ? 0 : self.cap / parts * 100 + self.cap % parts * 100 / parts
        return min(lower, self.cap)...self.cap
    }

    /// `percent` % of `value`, rounded down, without overflowing for any value up to `Int.max`.
    private static func percent(_ percent: Int, of value: Int) -> Int {
        let (whole, overflow) = (value / 100).multipliedReportingOverflow(by: percent)
        guard !overflow else { return Int.max }
        let (sum, sumOverflow) = whole.addingReportingOverflow(value % 100 * min(percent, Int.max / 100) / 100)
        return sumOverflow ? Int.max : sum
    }
}

/// A consecutive-failure counter with its policy: each failure yields the next delay; `reset()` after a
/// connection proved healthy (not merely opened).
public struct Backoff: Equatable, Hashable, Sendable {
    public let policy: BackoffPolicy
    /// Failures since the last reset.
    public private(set) var attempts = 0

    /// - Precondition: `policy.isValid`.
    public init(policy: BackoffPolicy = BackoffPolicy()) {
        precondition(policy.isValid, "invalid BackoffPolicy: \(policy)")
        self.policy = policy
    }

    /// Counts one more failure and returns how long to wait before the next attempt, in ms.
    public mutating func nextDelay(using random: inout some RandomNumberGenerator) -> Int {
        self.attempts += 1
        return self.policy.delay(attempt: self.attempts, using: &random)
    }

    /// The connection proved healthy: the next failure starts from `base` again.
    public mutating func reset() {
        self.attempts = 0
    }
}
