#if canImport(Security)
import Foundation
import Security

/// The Security calls of `URLSessionTransport`'s server-trust evaluation, nothing more: set the policy and the
/// anchors, evaluate, read each chain certificate's key. What to accept is `ServerTrustPolicy.decide`, and the
/// SubjectPublicKeyInfo is rebuilt by `SubjectPublicKeyInfo.der`, both tested on Linux; this file is type-checked
/// there against stand-ins (scripts/apple-typecheck.sh), never run.
enum ServerTrustEvaluator {
    /// Evaluates `trust` for `host` under `policy`: nil to accept the server, else why not.
    static func evaluate(_ trust: SecTrust, host: String, policy: ServerTrustPolicy) -> ServerTrustFailure? {
        // The host name is required even when the platform's default policy would not name it.
        let status = SecTrustSetPolicies(trust, SecPolicyCreateSSL(true, host as CFString))
        guard status == errSecSuccess else { return .certificateInvalid(status: status) }
        if !policy.additionalTrustRoots.isEmpty {
            guard let roots = policy.trustRootCertificates() else { return .unreadableTrustRoots }
            var anchors: [SecCertificate] = []
            for der in roots {
                guard let certificate = SecCertificateCreateWithData(nil, Data(der) as CFData) else {
                    return .unreadableTrustRoots
                }
                anchors.append(certificate)
            }
            guard SecTrustSetAnchorCertificates(trust, anchors as CFArray) == errSecSuccess,
                // Setting anchors alone would trust only them: the system's roots stay trusted.
                SecTrustSetAnchorCertificatesOnly(trust, false) == errSecSuccess
            else { return .unreadableTrustRoots }
        }
        var error: CFError?
        let evaluation: ServerTrustPolicy.ChainEvaluation =
            SecTrustEvaluateWithError(trust, &error) ? .trusted : .rejected(Self.failure(for: error))
        let chain = (SecTrustCopyCertificateChain(trust) as? [SecCertificate]) ?? []
        return policy.decide(evaluation: evaluation, chain: chain.map(Self.subjectPublicKeyInfo(of:)))
    }

    /// The failure named by the status code of `SecTrustEvaluateWithError`'s error.
    private static func failure(for error: CFError?) -> ServerTrustFailure {
        guard let error else { return .untrustedIssuer }
        let status = OSStatus(truncatingIfNeeded: CFErrorGetCode(error))
        switch status {
        case errSecHostNameMismatch: return .hostnameMismatch
        case errSecCertificateExpired: return .certificateExpired
        case errSecCertificateNotValidYet: return .certificateNotYetValid
        case errSecNotTrusted: return .untrustedIssuer
        default: return .certificateInvalid(status: status)
        }
    }

    /// The DER SubjectPublicKeyInfo of the certificate's key; nil for a key kind `SubjectPublicKeyInfo` does not
    /// encode (it then matches no pin).
    private static func subjectPublicKeyInfo(of certificate: SecCertificate) -> [UInt8]? {
        guard let key = SecCertificateCopyKey(certificate),
            let attributes = SecKeyCopyAttributes(key) as? [CFString: Any],
            let type = attributes[kSecAttrKeyType] as? String,
            let raw = SecKeyCopyExternalRepresentation(key, nil) as Data?
        else { return nil }
        // The key types are CFStrings: each is cast to a String to compare (as a `case` pattern, a CFString would
        // never match a String).
        let kind: SubjectPublicKeyInfo.KeyKind
        if type == kSecAttrKeyTypeRSA as String {
            kind = .rsa
        } else if type == kSecAttrKeyTypeECSECPrimeRandom as String {
            kind = .ellipticCurve
        } else {
            return nil
        }
        return SubjectPublicKeyInfo.der(kind: kind, rawKey: [UInt8](raw))
    }
}
#endif
