/// The connectivity model around `NetworkHint`: path state, request outcomes, a banner, pending user operations and
/// a transfer policy, kept apart so that none overwrites another.
///
/// - The hint never blocks a request (`allowsRequests` is always true): "unavailable" may be wrong, and a user's
///   retry goes to a real request.
/// - A request outcome never changes the path state, and a path update never invents a request outcome.
/// - A user operation whose request timed out while the path was unavailable is kept, in order, and handed back
///   exactly once when the path leaves `unavailable`. Nothing is dropped silently: every operation ends as
///   completed, failed (shown) or pending (shown in the banner count) until the caller cancels it.
/// - Updates from an older monitor generation and repeated identical updates change nothing.
///
/// Call from one serial domain. Operation ids are the caller's (for example a request counter).
public struct Connectivity: Equatable, Sendable {
    public private(set) var hint = NetworkHint()
    /// The latest request outcome attributed to the server (not to a missing path).
    public private(set) var lastOutcome: RequestOutcome?
    /// User operations waiting for the path to return, oldest first.
    public private(set) var pending: [UInt64] = []

    public init() {}

    /// Requests may always be sent: the hint informs, it never gates.
    public var allowsRequests: Bool { true }

    /// What the UI shows: `offline` only for an `unavailable` path (never for `unknown`), else the latest request
    /// failure, else nothing.
    public var banner: ConnectivityBanner {
        if self.hint.state == .unavailable {
            return .offline(pending: self.pending.count)
        }
        switch self.lastOutcome {
        case nil, .success?: return .hidden
        case let failure?: return .requestFailed(failure)
        }
    }

    /// Constrained wins over expensive; an unknown path has no restriction.
    public var transferPolicy: TransferPolicy {
        if self.hint.constrained { return .essentialOnly }
        if self.hint.expensive { return .deferLarge }
        return .normal
    }

    /// Starts a new monitor generation (see `NetworkHint.restart`); older monitors' updates are ignored from now on.
    public mutating func restartMonitor() -> Int {
        self.hint.restart()
    }

    /// A path update from monitor `generation`.
    /// - Returns: the pending operations to run now, oldest first, when the path just left `unavailable`; each is
    ///   returned exactly once and removed from `pending`. Empty otherwise.
    public mutating func pathUpdated(
        generation: Int, state: PathState, expensive: Bool = false, constrained: Bool = false
    ) -> [UInt64] {
        guard generation == self.hint.generation else { return [] }
        let wasUnavailable = self.hint.state == .unavailable
        self.hint.accept(generation: generation, state: state, expensive: expensive, constrained: constrained)
        guard wasUnavailable, state != .unavailable, !self.pending.isEmpty else { return [] }
        let ready = self.pending
        self.pending.removeAll()
        return ready
    }

    /// The request of user operation `id` finished with `outcome`.
    ///
    /// A timeout while the path is unavailable keeps the operation for recovery (and is not shown as a server
    /// failure); any other outcome is recorded in `lastOutcome` and removes the operation from `pending`.
    public mutating func requestFinished(_ id: UInt64, outcome: RequestOutcome) -> OperationDisposition {
        if outcome == .timeout && self.hint.state == .unavailable {
            if !self.pending.contains(id) {
                self.pending.append(id)
            }
            return .awaitingRecovery
        }
        self.pending.removeAll { $0 == id }
        self.lastOutcome = outcome
        return outcome == .success ? .completed : .failed(outcome)
    }

    /// A request that is no user operation (a session's connection attempt or heartbeat) finished: only
    /// `lastOutcome` changes, nothing becomes pending.
    public mutating func recordOutcome(_ outcome: RequestOutcome) {
        self.lastOutcome = outcome
    }

    /// The user gave up on a pending operation. Returns false when it was not pending.
    public mutating func cancel(_ id: UInt64) -> Bool {
        guard let index = self.pending.firstIndex(of: id) else { return false }
        self.pending.remove(at: index)
        return true
    }
}
