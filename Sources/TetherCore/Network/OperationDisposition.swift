/// What happened to a user operation after its request finished.
public enum OperationDisposition: Equatable, Hashable, Sendable {
    /// It succeeded and is forgotten.
    case completed
    /// It failed with `outcome`, which the UI shows; the user decides whether to retry.
    case failed(RequestOutcome)
    /// It timed out while the path was unavailable: it is kept and handed back once when the path returns.
    case awaitingRecovery
}
