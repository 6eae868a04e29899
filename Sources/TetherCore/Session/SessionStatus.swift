/// What a driver shows of a session after an event (`SessionMachine.statusChange()`), as a UI or a test sees it:
/// each field only in the phase it belongs to.
public struct SessionStatus: Equatable, Sendable {
    /// Where the session is: stopped, connecting, open, waiting (backoff), offline, suspended or failed.
    public var phase: SessionPhase
    /// The generation of the newest transport; 0 before the first connection attempt.
    public var generation: Int
    /// Failed attempts since the connection last proved healthy.
    public var attempts: Int
    /// When waiting: the next attempt's time, in milliseconds since the client was created.
    public var retryAt: Int?
    /// When failed: the non-retryable reason (for example a 401 handshake rejection).
    public var failure: CloseReason?
    /// The last measured ping round-trip time in milliseconds.
    public var lastRTT: Int?
    /// The network-path hint. Informs the UI; it never blocks a connection attempt.
    public var path: PathState
    /// Whether the path is expensive (cellular, a personal hotspot): the monitor's `isExpensive`. An app can defer
    /// large transfers while it is. False while the path is unknown and with a monitor that cannot tell.
    public var pathIsExpensive: Bool
    /// Whether the path is constrained (Low Data Mode): the monitor's `isConstrained`. An app should keep to what
    /// the user asked for while it is. False while the path is unknown and with a monitor that cannot tell.
    public var pathIsConstrained: Bool
    /// What a banner shows, from the path and the session's request outcomes kept apart: `.online`, `.offline`
    /// (no network), `.serverUnreachable(outcome)` (the network looks fine, the server did not answer as hoped,
    /// with how), or `.unknown` before anything is known. See `SessionMachine.connectivity`.
    public var connectivity: ConnectivityStatus

    public init(
        phase: SessionPhase, generation: Int, attempts: Int, retryAt: Int?,
        failure: CloseReason?, lastRTT: Int?, path: PathState, connectivity: ConnectivityStatus = .unknown,
        pathIsExpensive: Bool = false, pathIsConstrained: Bool = false
    ) {
        self.connectivity = connectivity
        self.pathIsExpensive = pathIsExpensive
        self.pathIsConstrained = pathIsConstrained
        self.phase = phase
        self.generation = generation
        self.attempts = attempts
        self.retryAt = retryAt
        self.failure = failure
        self.lastRTT = lastRTT
        self.path = path
    }
}

/// A path monitor's report as the session machine keeps it (`SessionMachine.pathReported`).
public struct PathReport: Equatable, Sendable {
    public var state: PathState
    public var expensive: Bool
    public var constrained: Bool
    /// The interfaces the path uses, each named by what the monitor says of it (kind and name); a change between
    /// two usable reports is an interface switch.
    public var interfaces: [String]

    public init(state: PathState, expensive: Bool = false, constrained: Bool = false, interfaces: [String] = []) {
        self.state = state
        self.expensive = expensive
        self.constrained = constrained
        self.interfaces = interfaces
    }
}

extension SessionMachine {
    /// The session as a driver shows it now.
    public var status: SessionStatus {
        SessionStatus(
            phase: self.phase, generation: self.generation, attempts: self.attempts,
            retryAt: self.phase == .waiting ? self.retryAt : nil, failure: self.phase == .failed ? self.failure : nil,
            lastRTT: self.lastRTT, path: self.hint.state, connectivity: self.connectivity,
            pathIsExpensive: self.hint.expensive, pathIsConstrained: self.hint.constrained
        )
    }

    /// The round trip to publish after an event (after the pong's record): the one measured by the pong accepted
    /// since the last call, nil when none was. Each accepted pong's round trip is returned once; an ignored pong
    /// (late, stale, a second completion) has none.
    public mutating func roundTripToPublish() -> Int? {
        defer { self.unpublishedRoundTrip = nil }
        return self.unpublishedRoundTrip
    }

    /// The status to publish after an event, with the reason of the close that led there (if one did): nil when
    /// nothing changed since the last one returned. A new round-trip time alone is no state change (a driver
    /// reports it with the pong's record); it is carried with the next change.
    ///
    /// The machine's state is compared with the published status field by field, in place, before a status is
    /// built: this runs after every event, and after most of them (a ping sent, a pong) nothing changed
    /// (docs/benchmarks.md, issue 40).
    public mutating func statusChange() -> (status: SessionStatus, cause: CloseReason?)? {
        let cause = self.cause
        self.cause = nil
        let unchanged = self.isShown(by: self.publishedStatus)
        assert(unchanged == (self.status.with(lastRTT: self.publishedStatus.lastRTT) == self.publishedStatus),
            "isShown(by:) must compare every field of SessionStatus but lastRTT")
        guard !unchanged else { return nil }
        let status = self.status
        self.publishedStatus = status
        return (status, cause)
    }

    /// Whether `published` shows the session as it is now, its round-trip time apart: `status` compared with it
    /// without building it. Every field of `SessionStatus` but `lastRTT`, each as `status` reads it.
    private func isShown(by published: SessionStatus) -> Bool {
        let phase = self.state.phase
        guard phase == published.phase, self.state.generation == published.generation,
              self.state.backoff.attempts == published.attempts
        else { return false }
        let hint = self.state.hint
        guard hint.state == published.path, hint.expensive == published.pathIsExpensive,
              hint.constrained == published.pathIsConstrained, self.connectivity == published.connectivity
        else { return false }
        // Each nil outside the phase it belongs to (cheap first: the published one is nil in most phases).
        guard (phase == .waiting ? self.state.retryAt : nil) == published.retryAt else { return false }
        guard phase == .failed else { return published.failure == nil }
        return self.state.failure == published.failure
    }
}

extension SessionStatus {
    /// This status with `lastRTT` replaced (to compare two statuses but for their round trips).
    func with(lastRTT: Int?) -> SessionStatus {
        var status = self
        status.lastRTT = lastRTT
        return status
    }
}
