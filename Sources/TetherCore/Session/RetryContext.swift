/// What the retry hook sees about a failure.
public struct RetryContext: Equatable, Sendable {
    /// The consecutive failure this is (1 for the first since the connection last proved healthy).
    public var attempt: Int
    /// The time since the first failure of this run of failures (zero for the first), in whole milliseconds.
    public var elapsed: Duration
    /// Why the latest connection or attempt ended.
    public var failure: CloseReason
    /// The wait the machine chose (backoff, or a server's Retry-After within its bounds), in whole milliseconds.
    public var proposedDelay: Duration

    public init(attempt: Int, elapsed: Duration, failure: CloseReason, proposedDelay: Duration) {
        self.attempt = attempt
        self.elapsed = elapsed
        self.failure = failure
        self.proposedDelay = proposedDelay
    }
}
