#if canImport(Security)
import Foundation
import Security

// The Apple shell of mutual TLS: a PKCS#12 identity becomes the credential URLSession presents on the
// client-certificate challenge. Everything else (validation at client creation, which challenge gets it) is shared;
// scripts/apple-typecheck.sh type-checks this file against stand-ins of Security and of URLCredential.
extension TLSOptions.ClientIdentity {
    /// The credential for `NSURLAuthenticationMethodClientCertificate`, or why there is none.
    func urlCredential() -> Result<URLCredential, ClientIdentityProblem> {
        guard case .pkcs12(let archive) = self.source else {
            return .failure(ClientIdentityProblem(
                "a PEM identity, which URLSessionTransport does not read (use ClientIdentity.pkcs12)"))
        }
        let options = [kSecImportExportPassphrase as String: self.passphrase ?? ""] as CFDictionary
        var items: CFArray?
        let status = SecPKCS12Import(archive as CFData, options, &items)
        guard status == errSecSuccess else {
            return .failure(ClientIdentityProblem(
                status == errSecAuthFailed
                    ? "the PKCS#12 passphrase is missing or does not decrypt it" : "the PKCS#12 archive is unreadable"))
        }
        guard let entries = items as? [[String: Any]], let first = entries.first,
            let found = first[kSecImportItemIdentity as String]
        else { return .failure(ClientIdentityProblem("the PKCS#12 archive holds no identity")) }
        // A CFType bridged from the dictionary: the cast cannot fail once the key is present.
        let identity = found as! SecIdentity
        let chain = (first[kSecImportItemCertChain as String] as? [SecCertificate]) ?? []
        // The leaf is the identity's own; the rest of the chain goes with it.
        return .success(
            URLCredential(identity: identity, certificates: Array(chain.dropFirst()), persistence: .forSession))
    }

    var securityProblem: String? {
        switch self.urlCredential() {
        case .success: nil
        case .failure(let problem): problem.description
        }
    }
}
#endif
