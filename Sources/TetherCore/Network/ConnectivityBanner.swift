/// What a UI shows about connectivity.
public enum ConnectivityBanner: Equatable, Hashable, Sendable {
    /// Nothing to show (also while the path is still unknown: unknown is never "offline").
    case hidden
    /// The path is unavailable; `pending` user operations will run when it returns.
    case offline(pending: Int)
    /// The path looks fine but the latest request failed; the user's retry goes to a real request.
    case requestFailed(RequestOutcome)
}
