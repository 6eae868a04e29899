/// The retry hook's answer.
public enum RetryDecision: Equatable, Sendable {
    /// Wait this many milliseconds (negative counts as 0), then try again.
    case retry(after: Int)
    /// Stop: the session fails visibly with the failure that led here.
    case stop
}
