import TetherCore

/// Why `WebSocketTaskDelegateBridge` refused an authentication challenge. The connection is told before the challenge
/// is cancelled, so that it ends for this reason (permanently: a retry would meet the same certificate or identity)
/// rather than as a cancelled task.
enum ChallengeRefusal: Error, Equatable, Sendable {
    /// The server's certificate did not pass `TLSOptions`.
    case serverTrust(ServerTrustFailure)
    /// The client identity could not be made into a credential when the server asked for it.
    case clientIdentity(ClientIdentityProblem)

    /// How the connection ends: `tls_failed` with the detail, as `SocketTransport` reports the same failures.
    var end: TransportEnd {
        switch self {
        case .serverTrust(let failure): failure.end
        case .clientIdentity(let problem):
            .tlsFailed(detail: "client identity unusable: \(problem.description)", permanent: true)
        }
    }
}

/// Why a client identity cannot be presented: unreadable, a wrong passphrase, a form the transport does not read.
struct ClientIdentityProblem: Error, Equatable, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
