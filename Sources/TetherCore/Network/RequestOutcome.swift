/// How one request ended, as the request layer saw it. Kept apart from the path state: a failed request never
/// rewrites the path hint, and a path hint never decides a request's outcome.
public enum RequestOutcome: Equatable, Hashable, Sendable {
    case success
    /// No answer in time.
    case timeout
    /// The server refused the credentials (for example HTTP 401/403).
    case authFailure
    /// The server failed (for example HTTP 5xx), with its status.
    case serverError(status: Int)
}

/// What a UI shows about connectivity.
public enum ConnectivityBanner: Equatable, Hashable, Sendable {
    /// Nothing to show (also while the path is still unknown: unknown is never "offline").
    case hidden
    /// The path is unavailable; `pending` user operations will run when it returns.
    case offline(pending: Int)
    /// The path looks fine but the latest request failed; the user's retry goes to a real request.
    case requestFailed(RequestOutcome)
}

/// What automatic transfers the app should do on the current path. User operations are never dropped for it.
public enum TransferPolicy: Equatable, Hashable, Sendable {
    /// No restriction.
    case normal
    /// The path is expensive (for example cellular or a hotspot): defer large automatic transfers.
    case deferLarge
    /// The path is constrained (Low Data Mode): only what the user explicitly asked for.
    case essentialOnly
}

/// What happened to a user operation after its request finished.
public enum OperationDisposition: Equatable, Hashable, Sendable {
    /// It succeeded and is forgotten.
    case completed
    /// It failed with `outcome`, which the UI shows; the user decides whether to retry.
    case failed(RequestOutcome)
    /// It timed out while the path was unavailable: it is kept and handed back once when the path returns.
    case awaitingRecovery
}
