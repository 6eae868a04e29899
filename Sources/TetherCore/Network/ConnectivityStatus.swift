/// What a UI shows about a session's connectivity (`SessionMachine.connectivity`): "no network" and "server
/// unreachable" apart, as the network-hint source document asks.
public enum ConnectivityStatus: Equatable, Hashable, Sendable, CustomStringConvertible {
    /// Nothing known yet: no attempt has finished and the path is not known to be unavailable. Never "offline".
    case unknown
    /// The latest request (an opening handshake, a pong) succeeded.
    case online
    /// No network: the path is unavailable and no open connection proves otherwise.
    case offline
    /// The network path looks usable (or is unknown) but the server did not answer as hoped; `outcome` says how
    /// (unreachable, timeout, rejected, closed, lost, ...).
    case serverUnreachable(RequestOutcome)

    /// The case as Swift spells it, with its outcome: `online`, `serverUnreachable(timeout)`.
    public var description: String {
        switch self {
        case .unknown: "unknown"
        case .online: "online"
        case .offline: "offline"
        case .serverUnreachable(let outcome): "serverUnreachable(\(outcome))"
        }
    }
}
