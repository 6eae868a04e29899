import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// URLSession asks two delegate methods about authentication: the session-level one gets every session-level
// challenge (server trust, client certificate, NTLM, Negotiate) when the delegate implements it, the task-level one
// gets the rest. Both give the same answer, decided here, so that no challenge depends on which of the two URLSession
// picks: the client certificate was once answered only at the task level, which URLSession never asked, and the
// identity was never presented.
extension WebSocketTaskDelegateBridge {
    /// The session-level challenges.
    func urlSession(
        _ session: URLSession, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        let (disposition, credential) = self.answer(challenge)
        completionHandler(disposition, credential)
    }

    /// The task-level challenges, and the session-level ones on a platform that sends those here.
    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        let (disposition, credential) = self.answer(challenge)
        completionHandler(disposition, credential)
    }

    /// How `challenge` is answered: the server's chain left to the platform unless `TLSOptions` ask for more, else
    /// evaluated and accepted or refused; the client identity presented when the server asks for a certificate;
    /// everything else, and everything on a platform without `ChallengeCredentials`, left to the platform. A refusal
    /// is reported to the connection before the challenge is cancelled.
    func answer(_ challenge: URLAuthenticationChallenge) -> (URLSession.AuthChallengeDisposition, URLCredential?) {
        guard let credentials = self.credentials else { return (.performDefaultHandling, nil) }
        let result: Result<URLCredential, ChallengeRefusal>
        switch credentials.kind(of: challenge) {
        case .serverTrust:
            guard !self.trust.isPlatformDefault,
                let evaluated = credentials.serverTrustCredential(for: challenge, host: self.host, policy: self.trust)
            else { return (.performDefaultHandling, nil) }
            result = evaluated.mapError(ChallengeRefusal.serverTrust)
        case .clientCertificate:
            // Without an identity the server decides: it may go on without one, or refuse (`tls_failed`, "client
            // certificate required").
            guard let identity = self.clientIdentity else { return (.performDefaultHandling, nil) }
            result = credentials.clientCredential(presenting: identity).mapError(ChallengeRefusal.clientIdentity)
        case .other:
            return (.performDefaultHandling, nil)
        }
        switch result {
        case .success(let credential):
            return (.useCredential, credential)
        case .failure(let refusal):
            self.delegate.taskDidRefuseChallenge(refusal)
            return (.cancelAuthenticationChallenge, nil)
        }
    }
}
