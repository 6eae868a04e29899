/// A `BackoffPolicy` in whole milliseconds, the unit the machine counts in, and its arithmetic: every step
/// saturates instead of overflowing, so a cap configured near the largest duration cannot trap.
struct BackoffSteps: Equatable, Hashable, Sendable {
    let base: Int
    let factorPercent: Int
    let cap: Int
    let jitterPercent: Int

    init(_ policy: BackoffPolicy) {
        self.base = policy.base.milliseconds
        self.factorPercent = policy.factorPercent
        self.cap = policy.cap.milliseconds
        self.jitterPercent = policy.jitterPercent
    }

    /// The exponential value before jitter for failure number `attempt` (1-based), saturated at `cap`.
    func exponentialDelay(attempt: Int) -> Int {
        var delay = self.base
        var step = 1
        while step < attempt && delay < self.cap {
            let (product, overflow) = delay.multipliedReportingOverflow(by: self.factorPercent)
            delay = overflow ? self.cap : product / 100
            step += 1
        }
        return min(delay, self.cap)
    }

    /// The delay after failure number `attempt`, drawn from `delayRange(attempt:)`.
    func delay(attempt: Int, using random: inout some RandomNumberGenerator) -> Int {
        let range = self.delayRange(attempt: attempt)
        return range.lowerBound == range.upperBound ? range.lowerBound : Int.random(in: range, using: &random)
    }

    /// `exponential ... exponential + jitter` below the cap, `cap * 100 / (100 + jitterPercent) ... cap` where that
    /// would pass the cap.
    func delayRange(attempt: Int) -> ClosedRange<Int> {
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
