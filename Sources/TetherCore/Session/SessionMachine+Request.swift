/// A session whose driver makes each attempt's request with a provider (`SessionConfiguration.providesRequests`): the
/// provider is told why the previous attempt ended (`lastEnd`), and a 401 or 403 on the upgrade is a stale
/// credential to refresh before it is a failure.
///
/// - A 401 or 403 that ends the session's attempt asks for a fresh request at once: the attempt is closed (its
///   `closed` record), a new one starts (`.openTransport`, a new generation) without counting an attempt, waiting or
///   consulting the retry policy. Once per attempt: when the attempt made with the fresh request is refused too, it
///   fails as without a provider (`.failed`, not retried).
/// - Without a provider nothing changes: a 401 or 403 fails the session.
extension SessionMachine {
    /// Why the session's latest connection or attempt ended (the reason of its `closed` record): nil before the first
    /// end since `start`. A driver tells its request provider (`.openTransport`).
    public var lastEnd: CloseReason? { self.state.lastEnd }

    /// When the session's attempt ended with `end` and a fresh request is the answer: the next attempt, at once.
    /// Nil otherwise (not a 401 or 403 on the upgrade, no provider, the attempt was already the second, or the
    /// session was not connecting).
    mutating func askAgain(after end: TransportEnd, now: Int) -> SessionAction? {
        guard self.configuration.providesRequests, !self.state.askedAgain,
              case .handshakeRejected(let status, _) = end, status == 401 || status == 403,
              case .live(.connecting(_, greeting: false)) = self.state.stage
        else {
            return nil
        }
        let from = self.state.phase
        self.connectionLeft(outcome: RequestOutcome(end), now: now)
        self.record(.closed(reason: CloseReason(end), code: status), now: now, from: from)
        let action = self.openTransport(now: now, from: from)
        self.state.askedAgain = true
        return action
    }
}
