#if os(Linux)
import TetherWire

/// PEM data: a file to read, or the bytes themselves.
package enum PEMSource: Sendable, Hashable {
    /// A PEM file's path, read when the TLS context is created.
    case file(String)
    /// PEM text held in memory.
    case bytes([UInt8])
}

/// How a TLS client verifies its server. Verification is on unless `insecureSkipVerification` says otherwise.
package struct TLSClientOptions: Sendable, Hashable {
    /// CA certificates trusted in addition to the system trust store (each source may hold several).
    package var additionalTrustRoots: [PEMSource]
    /// SPKI SHA-256 pins, each `sha256/` followed by the base64 of the digest of a certificate's DER
    /// SubjectPublicKeyInfo. When not empty, some certificate of the server's chain must match one of them, in
    /// addition to (not instead of) chain and host-name verification.
    package var pins: [String]
    /// No chain or host-name verification (pins, when given, are still checked). For local testing only.
    package var insecureSkipVerification: Bool
    /// Whether the context keeps the sessions its servers issue (TLS 1.3 tickets, TLS 1.2 sessions) and offers the
    /// latest one when it connects to the same server (name and port) again: a shorter handshake, without the
    /// certificate chain or its verification. A session is only offered by the context that verified it when it
    /// was made. False: every connection makes a full handshake, and connections cannot be linked by a ticket.
    package var sessionResumption: Bool
    /// The certificate and key presented when a server asks for one (mutual TLS); nil presents none.
    package var clientIdentity: TLSClientIdentity?

    package init(
        additionalTrustRoots: [PEMSource] = [], pins: [String] = [], insecureSkipVerification: Bool = false,
        sessionResumption: Bool = true, clientIdentity: TLSClientIdentity? = nil
    ) {
        self.additionalTrustRoots = additionalTrustRoots
        self.pins = pins
        self.insecureSkipVerification = insecureSkipVerification
        self.sessionResumption = sessionResumption
        self.clientIdentity = clientIdentity
    }
}

/// A TLS client's identity for servers that require one (mutual TLS): its certificate chain (leaf first, then any
/// intermediates) and private key, as PEM with the passphrase of an encrypted key, or a PKCS#12 archive with its
/// passphrase. The key and the passphrase are secrets: `description`, `debugDescription` and the mirror (`dump`)
/// never show them.
package struct TLSClientIdentity: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    enum Form: Sendable, Hashable {
        case pem(certificateChain: PEMSource, privateKey: PEMSource)
        /// A DER PKCS#12 archive (a file or its bytes).
        case pkcs12(PEMSource)
    }

    let form: Form
    /// The passphrase of an encrypted private key (PKCS#8 or OpenSSL's traditional encryption) or of the PKCS#12
    /// archive; nil for a plain key. Used only while the key is read, when a context is created.
    let passphrase: String?

    /// A PEM certificate chain and private key; `passphrase` decrypts an encrypted key.
    package init(certificateChain: PEMSource, privateKey: PEMSource, passphrase: String? = nil) {
        self.form = .pem(certificateChain: certificateChain, privateKey: privateKey)
        self.passphrase = passphrase
    }

    /// A PKCS#12 archive (`.p12`, `.pfx`, DER) holding the certificate, its chain and its key.
    package init(pkcs12 archive: PEMSource, passphrase: String) {
        self.form = .pkcs12(archive)
        self.passphrase = passphrase
    }

    package var description: String {
        ClientIdentityRedaction.description(
            typeName: "TLSClientIdentity", isArchive: self.chain == nil, hasPassphrase: self.passphrase != nil)
    }

    package var debugDescription: String { self.description }

    /// See `ClientIdentityRedaction`.
    package var customMirror: Mirror {
        ClientIdentityRedaction.mirror(of: self, certificateChain: self.chain, hasPassphrase: self.passphrase != nil)
    }

    /// The certificate chain of a PEM identity; nil for an archive.
    private var chain: PEMSource? {
        if case .pem(let chain, _) = self.form { chain } else { nil }
    }
}

/// A TLS server's identity: its certificate chain (leaf first) and private key, as PEM.
package struct TLSServerOptions: Sendable, Hashable {
    package var certificateChain: PEMSource
    package var privateKey: PEMSource
    /// For tests only: a server that speaks nothing newer than TLS 1.1 (and, to be able to, accepts TLS 1.0 and
    /// OpenSSL's security level 0), the outdated server a client must refuse as `TLSFailure.protocolVersion`.
    /// False (default): TLS 1.2 or later, like every Tether context.
    package var legacyVersionsOnlyForTesting = false
    /// For tests only: a server that speaks TLS 1.2 and nothing newer, to test what differs from TLS 1.3 (sessions
    /// resumed by a TLS 1.2 ticket). False (default): TLS 1.2 or later.
    package var tls12OnlyForTesting = false
    /// When set, the server requires a client certificate (mutual TLS) that chains to one of these CA
    /// certificates, and refuses a client without one. Nil (default): no client certificate is asked for.
    package var clientCertificateAuthorities: PEMSource?

    package init(certificateChain: PEMSource, privateKey: PEMSource, clientCertificateAuthorities: PEMSource? = nil) {
        self.certificateChain = certificateChain
        self.privateKey = privateKey
        self.clientCertificateAuthorities = clientCertificateAuthorities
    }
}

/// A TLS context could not be created from its options. The description names what was wrong, never a key.
package enum TLSConfigurationError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A pin is not `sha256/` followed by the base64 of 32 bytes.
    case invalidPin
    /// A trust root source could not be read or holds no PEM certificate.
    case invalidTrustRoots
    /// The server's certificate chain could not be read or holds no PEM certificate.
    case invalidCertificate
    /// The server's private key could not be read, or does not match its certificate.
    case invalidPrivateKey
    /// OpenSSL refused to create the context.
    case contextUnavailable
    /// The client identity's certificate chain could not be read or holds no PEM certificate (or its PKCS#12
    /// archive could not be read).
    case invalidClientCertificate
    /// The client identity's private key could not be read as a PEM private key.
    case invalidClientKey
    /// The client identity's private key (or PKCS#12 archive) is encrypted, and no passphrase was given or it is
    /// not the right one.
    case clientKeyPassphrase
    /// The client identity's private key is not the key of its certificate.
    case clientKeyMismatch
    /// The client identity's PKCS#12 archive could not be read, or holds no certificate and key.
    case invalidClientArchive
    /// The client certificate authorities a server requires could not be read as PEM certificates.
    case invalidClientCertificateAuthorities

    package var description: String {
        switch self {
        case .invalidPin: "a pin is not sha256/ followed by the base64 of a SHA-256 digest"
        case .invalidTrustRoots: "the additional trust roots could not be read as PEM certificates"
        case .invalidCertificate: "the certificate chain could not be read as PEM certificates"
        case .invalidPrivateKey: "the private key could not be read as PEM or does not match the certificate"
        case .contextUnavailable: "OpenSSL could not create a TLS context"
        case .invalidClientCertificate: "the client certificate chain could not be read as PEM certificates"
        case .invalidClientKey: "the client private key could not be read as a PEM private key"
        case .clientKeyPassphrase:
            "the client private key is encrypted and the passphrase is missing or does not decrypt it"
        case .invalidClientArchive: "the client PKCS#12 archive could not be read or holds no certificate and key"
        case .clientKeyMismatch: "the client private key does not match the client certificate"
        case .invalidClientCertificateAuthorities:
            "the client certificate authorities could not be read as PEM certificates"
        }
    }
}
#endif
