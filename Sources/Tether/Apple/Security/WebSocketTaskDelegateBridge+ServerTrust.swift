#if canImport(Security)
import Foundation
import Security

// Apple platforms only. The one place that touches the challenge's Foundation API (`serverTrust`, the server-trust
// method, `URLCredential(trust:)`), which Linux's Foundation declares unavailable: scripts/apple-typecheck.sh
// cannot check this file, so it stays this small; the Security calls are in `ServerTrustEvaluator` and the
// decision in `ServerTrustPolicy`.
extension WebSocketTaskDelegateBridge {
    /// The server-trust challenge: left to the platform unless `TLSOptions` ask for more; otherwise evaluated, and
    /// a refusal reported to the connection before the challenge is cancelled (the task then completes).
    func urlSession(
        _ session: URLSession, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        guard challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodServerTrust,
            let serverTrust = challenge.protectionSpace.serverTrust, !self.trust.isPlatformDefault
        else {
            completionHandler(.performDefaultHandling, nil)
            return
        }
        if let failure = ServerTrustEvaluator.evaluate(serverTrust, host: self.host, policy: self.trust) {
            self.delegate.taskDidRefuseServerTrust(failure)
            completionHandler(.cancelAuthenticationChallenge, nil)
        } else {
            completionHandler(.useCredential, URLCredential(trust: serverTrust))
        }
    }
}
#endif
