#if os(Linux)
import TetherPOSIX

/// The certificate chain and private key a `TestServer` presents to serve `wss://` (PEM, as `openssl req -x509`
/// writes them).
public struct TestServerTLS: Sendable, Hashable {
    /// PEM text: a file to read when the server starts, or the text itself.
    public enum PEM: Sendable, Hashable {
        /// A PEM file's path.
        case file(String)
        /// PEM text.
        case text([UInt8])
    }

    /// What the server gives OpenSSL (the package's own tests also ask for an outdated server with it).
    package let options: TLSServerOptions

    /// - Parameters:
    ///   - certificateChain: the server's certificate, then any intermediates.
    ///   - privateKey: the certificate's key.
    ///   - clientCertificateAuthorities: when given, the server requires a client certificate (mutual TLS) issued
    ///     by one of these CA certificates and refuses a client without one (recorded as `.tlsFailed`); the
    ///     subject of the certificate it accepted is in `ConnectionRecord.clientCertificateSubject`. Default nil.
    public init(certificateChain: PEM, privateKey: PEM, clientCertificateAuthorities: PEM? = nil) {
        self.options = TLSServerOptions(
            certificateChain: certificateChain.source, privateKey: privateKey.source,
            clientCertificateAuthorities: clientCertificateAuthorities?.source)
    }

    /// For the package's tests and tools, which make throw-away certificates in memory (`TestCertificateAuthority`).
    package init(_ options: TLSServerOptions) {
        self.options = options
    }
}

extension TestServerTLS.PEM {
    fileprivate var source: PEMSource {
        switch self {
        case .file(let path): .file(path)
        case .text(let bytes): .bytes(bytes)
        }
    }
}
#endif

