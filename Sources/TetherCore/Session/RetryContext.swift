/// What the retry hook sees about a failure.
public struct RetryContext: Equatable, Sendable {
    /// The consecutive failure this is (1 for the first since the connection last proved healthy).
    public var attempt: Int
    /// Milliseconds since the first failure of this run of failures (0 for the first).
    public var elapsed: Int
    /// Why the latest connection or attempt ended.
    public var failure: CloseReason
    /// The wait the machine chose (backoff, or a server's Retry-After within its bounds), in ms.
    public var proposedDelay: Int

    public init(attempt: Int, elapsed: Int, failure: CloseReason, proposedDelay: Int) {
        self.attempt = attempt
        self.elapsed = elapsed
        self.failure = failure
        self.proposedDelay = proposedDelay
    }
}
