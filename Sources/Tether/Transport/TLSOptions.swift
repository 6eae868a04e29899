import Foundation
import TetherWire

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
    /// The client certificate presented to a server that asks for one (mutual TLS); nil (default) presents none.
    /// Checked when the client is created: a key that does not match its certificate, an unreadable file or a
    /// wrong passphrase is a `WebSocketConfigurationError` for `tls.clientIdentity`, before any connection. A
    /// server that requires a certificate and gets none, or refuses it, fails the attempt with `tls_failed`
    /// ("client certificate required", "client certificate rejected: unknown ca", ...), not retried.
    /// `SocketTransport` reads PEM (`ClientIdentity.pem`) and PKCS#12 (`ClientIdentity.pkcs12`) through OpenSSL;
    /// `URLSessionTransport` a PKCS#12 identity, which it presents on the client-certificate challenge.
    public var clientIdentity: ClientIdentity?

    public init(
        additionalTrustRoots: [Certificates] = [], pins: [String] = [], insecureSkipVerification: Bool = false,
        sessionResumption: Bool = true, clientIdentity: ClientIdentity? = nil
    ) {
        self.additionalTrustRoots = additionalTrustRoots
        self.pins = pins
        self.insecureSkipVerification = insecureSkipVerification
        self.sessionResumption = sessionResumption
        self.clientIdentity = clientIdentity
    }

    /// Whether `pin` has the form `sha256/` + the base64 of 32 bytes (`SPKIPin`: the rule the socket transport's
    /// TLS context, the URLSession trust evaluation and the command line all apply).
    package static func isWellFormed(pin: String) -> Bool {
        SPKIPin.isWellFormed(pin)
    }
}

extension TLSOptions {
    /// A client certificate and its private key, for servers that require one (mutual TLS). The key and the
    /// passphrase are secrets: `description`, `debugDescription` and the mirror (`dump`, `String(reflecting:)`)
    /// never show them, alone or inside `TLSOptions` and `WebSocketConfiguration`.
    public struct ClientIdentity: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible,
        CustomReflectable
    {
        /// A PEM private key: a file to read, or the text itself (a secret).
        public enum PrivateKey: Sendable, Hashable {
            /// A PEM file's path.
            case pemFile(String)
            /// PEM text.
            case pem(Data)
        }

        /// Where the identity comes from.
        enum Source: Sendable, Hashable {
            case pem(certificateChain: Certificates, privateKey: PrivateKey)
            case pkcs12(Data)
        }

        let source: Source
        /// The passphrase of an encrypted PEM key or of a PKCS#12 archive; nil for a plain key.
        let passphrase: String?

        /// A certificate chain (the client's certificate first, then any intermediates) and its private key, as
        /// PEM (what `openssl req` and most CAs write); `passphrase` decrypts an encrypted key (`BEGIN ENCRYPTED
        /// PRIVATE KEY` or OpenSSL's traditional encryption). Used by `SocketTransport`.
        public static func pem(
            certificateChain: Certificates, privateKey: PrivateKey, passphrase: String? = nil
        ) -> ClientIdentity {
            ClientIdentity(source: .pem(certificateChain: certificateChain, privateKey: privateKey),
                           passphrase: passphrase)
        }

        /// A PKCS#12 archive (`.p12`, `.pfx`) holding the certificate, its chain and its key, with its
        /// passphrase. Read by both transports: the one form that works on Linux and Apple platforms alike.
        public static func pkcs12(_ data: Data, passphrase: String) -> ClientIdentity {
            ClientIdentity(source: .pkcs12(data), passphrase: passphrase)
        }

        public var description: String {
            ClientIdentityRedaction.description(
                typeName: "ClientIdentity", isArchive: self.chain == nil, hasPassphrase: self.passphrase != nil)
        }

        public var debugDescription: String { self.description }

        /// Where the certificate comes from (a path, or PEM certificates, which are public); the key, the archive
        /// and the passphrase as placeholders.
        public var customMirror: Mirror {
            ClientIdentityRedaction.mirror(
                of: self, certificateChain: self.chain, hasPassphrase: self.passphrase != nil)
        }

        /// The certificate chain of a PEM identity; nil for an archive.
        private var chain: Certificates? {
            if case .pem(let chain, _) = self.source { chain } else { nil }
        }
    }
}

extension TLSOptions.ClientIdentity {
    /// Why `transport` cannot present this identity (unreadable, a wrong passphrase, a key that is not the
    /// certificate's, a form the transport does not read), or nil when it can or the transport takes no identity.
    func problem(for transport: any WebSocketTransport) -> String? {
        #if os(Linux)
        if transport is SocketTransport { return self.socketProblem }
        #endif
        #if canImport(Security)
        // A PEM identity is refused by `URLSessionTransport.checkSupport(of:)`, which says what to use instead.
        if transport is URLSessionTransport, case .pkcs12 = self.source { return self.securityProblem }
        #endif
        return nil
    }
}
