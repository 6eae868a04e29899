import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The platform's side of the authentication challenges `WebSocketTaskDelegateBridge` answers: which challenge it
/// is, and the credentials Security makes. `SecurityChallengeCredentials` on Apple platforms; none on Linux, whose
/// Foundation asks the delegate no certificate questions (URLSessionTransport refuses the settings that need them
/// there). Tests script it. Which answer a challenge gets is the bridge's decision, not this protocol's.
protocol ChallengeCredentials: Sendable {
    /// Which of the challenges the bridge tells apart `challenge` is.
    func kind(of challenge: URLAuthenticationChallenge) -> ChallengeKind
    /// The server's chain in `challenge`, evaluated for `host` under `policy`: the credential that accepts it, or why
    /// it is refused; nil when the challenge carries no chain.
    func serverTrustCredential(
        for challenge: URLAuthenticationChallenge, host: String, policy: ServerTrustPolicy
    ) -> Result<URLCredential, ServerTrustFailure>?
    /// The credential that presents `identity` to a server that asks for a client certificate, or why there is none.
    func clientCredential(
        presenting identity: TLSOptions.ClientIdentity
    ) -> Result<URLCredential, ClientIdentityProblem>
}

/// The authentication challenges the bridge tells apart.
enum ChallengeKind: Equatable, Sendable {
    /// `NSURLAuthenticationMethodServerTrust`: the server's certificate chain.
    case serverTrust
    /// `NSURLAuthenticationMethodClientCertificate`: the server asks for a client certificate (mutual TLS).
    case clientCertificate
    /// Anything else (HTTP Basic or Digest, NTLM, Negotiate): the platform's default handling.
    case other
}
