#if canImport(Security)
import Foundation
import Security

/// The Security side of the challenges `WebSocketTaskDelegateBridge` answers, nothing more: which challenge it is,
/// the server's chain evaluated (`ServerTrustEvaluator`) and accepted as `URLCredential(trust:)`, the client identity
/// as a credential (`ClientIdentity.urlCredential()`). Which answer each challenge gets is the bridge's decision,
/// tested on Linux; this shell is type-checked there against stand-ins (scripts/apple-typecheck.sh), never run.
struct SecurityChallengeCredentials: ChallengeCredentials {
    func kind(of challenge: URLAuthenticationChallenge) -> ChallengeKind {
        switch challenge.protectionSpace.authenticationMethod {
        case NSURLAuthenticationMethodServerTrust: .serverTrust
        case NSURLAuthenticationMethodClientCertificate: .clientCertificate
        default: .other
        }
    }

    func serverTrustCredential(
        for challenge: URLAuthenticationChallenge, host: String, policy: ServerTrustPolicy
    ) -> Result<URLCredential, ServerTrustFailure>? {
        guard let serverTrust = challenge.protectionSpace.serverTrust else { return nil }
        if let failure = ServerTrustEvaluator.evaluate(serverTrust, host: host, policy: policy) {
            return .failure(failure)
        }
        return .success(URLCredential(trust: serverTrust))
    }

    func clientCredential(
        presenting identity: TLSOptions.ClientIdentity
    ) -> Result<URLCredential, ClientIdentityProblem> {
        identity.urlCredential()
    }
}
#endif
