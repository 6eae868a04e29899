/// The retry hook's answer.
public enum RetryDecision: Equatable, Sendable {
    /// Wait this long (negative counts as 0; whole milliseconds, rounded down), then try again.
    case retry(after: Duration)
    /// Stop: the session fails visibly with the failure that led here.
    case stop
}
