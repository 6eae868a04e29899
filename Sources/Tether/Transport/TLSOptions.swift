import Foundation

/// How a `wss://` connection verifies its server. Secure by default: TLS 1.2 or later, the certificate chain
/// verified against the system trust store and the host name (or IP address) of the URL, SNI sent for names.
///
/// Applies to `SocketTransport` (Linux, over the system OpenSSL). `URLSessionTransport` uses the platform's own
/// trust evaluation and ignores these options.
public struct TLSOptions: Sendable, Hashable {
    /// PEM certificates: a file to read when connecting, or the text itself.
    public enum Certificates: Sendable, Hashable {
        /// A PEM file's path (one or more certificates).
        case pemFile(String)
        /// PEM text (one or more certificates).
        case pem(Data)
    }

    /// CA certificates trusted in addition to the system trust store (for example a private CA). Default none.
    public var additionalTrustRoots: [Certificates]
    /// SPKI SHA-256 pins, each `sha256/` followed by the base64 of the SHA-256 digest of a certificate's DER
    /// SubjectPublicKeyInfo (what `curl --pinnedpubkey` takes). When not empty, some certificate of the server's
    /// verified chain must match one of them, in addition to the usual verification. Default none.
    public var pins: [String]
    /// Turns chain and host-name verification off: any certificate is accepted (pins, when given, still apply).
    /// For local testing only; never in production. Default false.
    public var insecureSkipVerification: Bool

    public init(
        additionalTrustRoots: [Certificates] = [], pins: [String] = [], insecureSkipVerification: Bool = false
    ) {
        self.additionalTrustRoots = additionalTrustRoots
        self.pins = pins
        self.insecureSkipVerification = insecureSkipVerification
    }

    /// Whether `pin` has the form `sha256/` + the base64 of 32 bytes.
    package static func isWellFormed(pin: String) -> Bool {
        guard pin.hasPrefix("sha256/") else { return false }
        let digest = pin.dropFirst("sha256/".count)
        return digest.utf8.count == 44 && Data(base64Encoded: String(digest))?.count == 32
    }
}
