/// How the opening handshake was answered.
public enum HandshakeOutcome: Sendable, Equatable, CustomStringConvertible {
    /// 101, with the selected subprotocol.
    case accepted(subprotocol: String?)
    /// Rejected by the scenario with this status.
    case rejected(status: Int, retryAfterSeconds: Int?)
    /// Redirected by the scenario with this status (the location is not recorded: it may hold a token).
    case redirected(status: Int)
    /// The request was not a valid upgrade; answered 400. `reason` never holds header values.
    case invalid(reason: String)
    /// Never answered (`Scenario.Handshake.ignore`).
    case ignored

    public var description: String {
        switch self {
        case .accepted(let subprotocol): "accepted" + (subprotocol.map { " (subprotocol \($0))" } ?? "")
        case .rejected(let status, let retryAfter):
            "rejected \(status)" + (retryAfter.map { " retry-after \($0)" } ?? "")
        case .redirected(let status): "redirected \(status)"
        case .invalid(let reason): "bad upgrade (\(reason)), answered 400"
        case .ignored: "ignored"
        }
    }
}
