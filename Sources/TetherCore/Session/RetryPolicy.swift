/// When a session stops retrying, and how long it waits: limits and an optional hook, as a value.
///
/// The limits and the hook apply to counted failures only (those that back off, including a server's "come back
/// later"); a failed liveness probe reconnects at once and an outage of the path counts nothing, as before.
public struct RetryPolicy: Sendable {
    /// After this many consecutive failed attempts the session fails visibly (`.failed`, with the last failure,
    /// and a `.gaveUp` record) instead of waiting again. Nil (the default): no limit; at least 1.
    public var maximumAttempts: Int?
    /// Once this long has passed since the first failure of the current run of failures, the next failure fails
    /// the session instead of waiting. Nil (the default): no limit; at least 0.
    public var maximumElapsed: Duration?
    /// Sees every counted failure after the limits passed it, with the delay the machine chose, and returns
    /// `.retry(after:)` with its own delay (at least 0), `.stop` to fail the session, or nil to keep the machine's
    /// choice — so a team can add its own close-code policy without touching the machine. Called synchronously
    /// inside the machine: keep it quick and pure.
    public var decide: (@Sendable (RetryContext) -> RetryDecision?)?

    public init(
        maximumAttempts: Int? = nil, maximumElapsed: Duration? = nil,
        decide: (@Sendable (RetryContext) -> RetryDecision?)? = nil
    ) {
        self.maximumAttempts = maximumAttempts
        self.maximumElapsed = maximumElapsed
        self.decide = decide
    }

    /// `maximumElapsed` in milliseconds, as it was before it became a `Duration`.
    @available(*, deprecated, message: "maximumElapsed is a Duration: RetryPolicy(maximumElapsed: .seconds(60))")
    public init(
        maximumAttempts: Int? = nil, maximumElapsed: Int,
        decide: (@Sendable (RetryContext) -> RetryDecision?)? = nil
    ) {
        self.init(maximumAttempts: maximumAttempts, maximumElapsed: .milliseconds(maximumElapsed), decide: decide)
    }
}

extension RetryPolicy: Equatable {
    /// Compares the limits and whether a hook is set (two closures cannot be compared).
    public static func == (lhs: RetryPolicy, rhs: RetryPolicy) -> Bool {
        lhs.maximumAttempts == rhs.maximumAttempts && lhs.maximumElapsed == rhs.maximumElapsed
            && (lhs.decide == nil) == (rhs.decide == nil)
    }
}
