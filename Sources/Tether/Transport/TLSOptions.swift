import Foundation

/// How a `wss://` connection verifies its server. Secure by default: TLS 1.2 or later, the certificate chain
/// verified against the system trust store and the host name (or IP address) of the URL, SNI sent for names.
///
/// `SocketTransport` applies them over the system OpenSSL; `URLSessionTransport` on Apple platforms through the
/// session's server-trust challenge (pins and roots alike, with the same failures). A transport that cannot honour
/// an option refuses it when the client is created (`WebSocketTransport.checkSupport(of:)`): `URLSessionTransport`
/// on Linux refuses them all, and `sessionResumption` off everywhere. See docs/platforms.md.
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
    /// TLS session resumption: connections with the same options to the same host and port offer the latest
    /// session (a TLS 1.3 ticket, used once, or a TLS 1.2 session) their server issued, so that a reconnect makes
    /// an abbreviated handshake, without the certificate chain: fewer bytes and far less CPU on both sides. A
    /// session is only offered under the options (roots, pins, verification) it was verified with, at most 8
    /// servers keep one per set of options, and one leaves after a handshake with it failed. Turn it off to make
    /// every connection a full handshake that a ticket cannot link to the previous one. Default true.
    public var sessionResumption: Bool

    public init(
        additionalTrustRoots: [Certificates] = [], pins: [String] = [], insecureSkipVerification: Bool = false,
        sessionResumption: Bool = true
    ) {
        self.additionalTrustRoots = additionalTrustRoots
        self.pins = pins
        self.insecureSkipVerification = insecureSkipVerification
        self.sessionResumption = sessionResumption
    }

    /// Whether `pin` has the form `sha256/` + the base64 of 32 bytes.
    package static func isWellFormed(pin: String) -> Bool {
        guard pin.hasPrefix("sha256/") else { return false }
        let digest = pin.dropFirst("sha256/".count)
        return digest.utf8.count == 44 && Data(base64Encoded: String(digest))?.count == 32
    }
}
