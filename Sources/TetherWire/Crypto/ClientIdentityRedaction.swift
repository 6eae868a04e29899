/// How a client identity (mutual TLS) shows itself wherever Swift prints a value: never its key, its PKCS#12
/// archive or its passphrase; where its certificate comes from (a path or a certificate, which are public). Shared by
/// `TLSClientIdentity` and Tether's `TLSOptions.ClientIdentity`, on every platform.
package enum ClientIdentityRedaction {
    /// For example `ClientIdentity(PEM, key redacted, passphrase redacted)`.
    package static func description(typeName: String, isArchive: Bool, hasPassphrase: Bool) -> String {
        "\(typeName)(\(isArchive ? "PKCS#12" : "PEM"), key redacted" + (hasPassphrase ? ", passphrase redacted)" : ")")
    }

    /// The mirror (`dump`, `Mirror`): the certificate chain's source for a PEM identity (nil for an archive), and
    /// placeholders for the secrets.
    package static func mirror(of subject: Any, certificateChain: Any?, hasPassphrase: Bool) -> Mirror {
        let passphrase: Mirror.Child = (label: "passphrase", value: hasPassphrase ? "(redacted)" : "none")
        let children: [Mirror.Child] =
            if let certificateChain {
                [("certificateChain", certificateChain), ("privateKey", "(redacted)"), passphrase]
            } else {
                [("pkcs12", "(redacted)"), passphrase]
            }
        return Mirror(subject, children: children, displayStyle: .struct)
    }
}
