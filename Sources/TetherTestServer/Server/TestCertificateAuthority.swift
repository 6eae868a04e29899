#if os(Linux)
import COpenSSL
import TetherPOSIX

/// A certificate and its private key, as PEM.
public struct TestCertificate: Sendable, Hashable {
    public let certificatePEM: [UInt8]
    public let privateKeyPEM: [UInt8]
    /// The certificate's SPKI pin: `sha256/` and the base64 of the SHA-256 digest of its SubjectPublicKeyInfo.
    public let pin: String

    /// What a `TestServer` needs to present this certificate.
    public var serverTLS: TestServerTLS { TestServerTLS(self.serverOptions) }

    /// What a `TestServer` needs to present this certificate and require a client certificate issued by
    /// `authority` (mutual TLS).
    public func serverTLS(requiringClientCertificatesFrom authority: TestCertificate) -> TestServerTLS {
        var options = self.serverOptions
        options.clientCertificateAuthorities = .bytes(authority.certificatePEM)
        return TestServerTLS(options)
    }

    /// The certificate and its key as a PKCS#12 archive (DER) that `passphrase` opens.
    public func pkcs12(passphrase: String) -> [UInt8] {
        let certificates = try? PEM.certificates(.bytes(self.certificatePEM), failure: .invalidCertificate)
        guard let certificate = certificates?.first,
            case .key(let key) = PEM.privateKey(.bytes(self.privateKeyPEM), passphrase: nil)
        else { fatalError("the certificate's own PEM does not read back") }
        defer {
            certificates?.forEach { X509_free($0) }
            EVP_PKEY_free(key)
        }
        guard let archive = PKCS12_create(passphrase, "tether test", key, certificate, nil, 0, 0, 0, 0, 0) else {
            fatalError("OpenSSL could not make a PKCS#12 archive")
        }
        defer { PKCS12_free(archive) }
        return TestCertificateAuthority.write { i2d_PKCS12_bio($0, archive) }
    }

    /// The private key as encrypted PKCS#8 PEM (AES-256-CBC), which `passphrase` decrypts.
    public func encryptedPrivateKeyPEM(passphrase: String) -> [UInt8] {
        guard case .key(let key) = PEM.privateKey(.bytes(self.privateKeyPEM), passphrase: nil) else {
            fatalError("the certificate's own key does not read back")
        }
        defer { EVP_PKEY_free(key) }
        let secret = Array(passphrase.utf8)
        return TestCertificateAuthority.write { bio in
            PEM_write_bio_PKCS8PrivateKey(bio, key, EVP_aes_256_cbc(), secret, Int32(secret.count), nil, nil)
        }
    }

    /// What a TLS server of the package's own tests needs to present this certificate.
    package var serverOptions: TLSServerOptions {
        TLSServerOptions(certificateChain: .bytes(self.certificatePEM), privateKey: .bytes(self.privateKeyPEM))
    }
}

/// A throw-away certificate authority for tests, made in memory with the system OpenSSL (EC P-256 keys, SHA-256
/// signatures): a client that trusts `certificate` accepts what it issues for the right host and time, and rejects
/// the rest with the matching `TLSFailure`. Never use it outside tests.
public struct TestCertificateAuthority: Sendable {
    /// The CA's own certificate (the root a client adds to its trust roots) and key.
    public let certificate: TestCertificate

    /// A new CA, valid from an hour ago for `days` days.
    public init(commonName: String = "Tether Test CA", days: Int = 2) {
        let key = Self.makeKey()
        defer { EVP_PKEY_free(key) }
        let certificate = Self.makeCertificate(
            commonName: commonName, key: key, issuer: nil, issuerKey: key, hosts: [], isAuthority: true,
            notBefore: -3600, notAfter: days * 86_400)
        defer { X509_free(certificate) }
        self.certificate = Self.pem(certificate, key: key)
    }

    /// A server certificate for `hosts` (names or IP literals, in its subjectAltName), signed by this CA.
    /// - Parameters:
    ///   - notBefore, notAfter: the validity, in seconds from now (an expired one: both negative).
    public func issue(
        hosts: [String] = ["localhost", "127.0.0.1", "::1"], notBefore: Int = -3600, notAfter: Int = 86_400
    ) -> TestCertificate {
        self.sign(
            commonName: hosts.first ?? "localhost", hosts: hosts, usage: "serverAuth", notBefore: notBefore,
            notAfter: notAfter)
    }

    /// A client certificate (mutual TLS) for `commonName`, signed by this CA: its subject is `CN=commonName`, its
    /// extended key usage `clientAuth`.
    /// - Parameters:
    ///   - notBefore, notAfter: the validity, in seconds from now (an expired one: both negative).
    public func issueClient(commonName: String, notBefore: Int = -3600, notAfter: Int = 86_400) -> TestCertificate {
        self.sign(commonName: commonName, hosts: [], usage: "clientAuth", notBefore: notBefore, notAfter: notAfter)
    }

    /// A certificate with a new key, signed by this CA, for `usage` (an extended key usage).
    private func sign(
        commonName: String, hosts: [String], usage: String, notBefore: Int, notAfter: Int
    ) -> TestCertificate {
        let issuer = Self.read(self.certificate)
        defer {
            X509_free(issuer.certificate)
            EVP_PKEY_free(issuer.key)
        }
        let key = Self.makeKey()
        defer { EVP_PKEY_free(key) }
        let certificate = Self.makeCertificate(
            commonName: commonName, key: key, issuer: issuer.certificate, issuerKey: issuer.key, hosts: hosts,
            isAuthority: false, notBefore: notBefore, notAfter: notAfter, usage: usage)
        defer { X509_free(certificate) }
        return Self.pem(certificate, key: key)
    }

    /// A self-signed server certificate for `hosts`, which no CA vouches for.
    public static func selfSigned(hosts: [String] = ["localhost", "127.0.0.1", "::1"]) -> TestCertificate {
        let key = Self.makeKey()
        defer { EVP_PKEY_free(key) }
        let certificate = Self.makeCertificate(
            commonName: hosts.first ?? "localhost", key: key, issuer: nil, issuerKey: key, hosts: hosts,
            isAuthority: false, notBefore: -3600, notAfter: 86_400)
        defer { X509_free(certificate) }
        return Self.pem(certificate, key: key)
    }

    // MARK: - OpenSSL

    private static func makeKey() -> OpaquePointer {
        guard let key = tether_EVP_EC_gen_P256() else { fatalError("OpenSSL could not generate a P-256 key") }
        return key
    }

    private static func makeCertificate(
        commonName: String, key: OpaquePointer, issuer: OpaquePointer?, issuerKey: OpaquePointer, hosts: [String],
        isAuthority: Bool, notBefore: Int, notAfter: Int, usage: String = "serverAuth"
    ) -> OpaquePointer {
        guard let certificate = X509_new() else { fatalError("OpenSSL could not allocate a certificate") }
        _ = X509_set_version(certificate, 2)  // v3
        _ = ASN1_INTEGER_set(X509_get_serialNumber(certificate), Int.random(in: 1...Int(Int32.max)))
        _ = X509_gmtime_adj(X509_getm_notBefore(certificate), notBefore)
        _ = X509_gmtime_adj(X509_getm_notAfter(certificate), notAfter)
        _ = X509_set_pubkey(certificate, key)
        _ = tether_X509_NAME_add_common_name(X509_get_subject_name(certificate), commonName)
        _ = X509_set_issuer_name(certificate, X509_get_subject_name(issuer ?? certificate))
        var context = X509V3_CTX()
        X509V3_set_ctx(&context, issuer ?? certificate, certificate, nil, nil, 0)
        var extensions: [(Int32, String)] = [(NID_subject_key_identifier, "hash")]
        if isAuthority {
            extensions += [
                (NID_basic_constraints, "critical,CA:TRUE"), (NID_key_usage, "critical,keyCertSign,cRLSign"),
            ]
        } else {
            extensions += [
                (NID_basic_constraints, "critical,CA:FALSE"), (NID_ext_key_usage, usage),
                (NID_authority_key_identifier, "keyid:always"),
            ]
            let names = hosts.map { TLSSession.isIPAddress($0) ? "IP:\($0)" : "DNS:\($0)" }
            if !names.isEmpty { extensions.append((NID_subject_alt_name, names.joined(separator: ","))) }
        }
        for (nid, value) in extensions {
            guard let `extension` = X509V3_EXT_conf_nid(nil, &context, nid, value) else {
                fatalError("OpenSSL refused the certificate extension \(nid)")
            }
            _ = X509_add_ext(certificate, `extension`, -1)
            X509_EXTENSION_free(`extension`)
        }
        guard X509_sign(certificate, issuerKey, EVP_sha256()) > 0 else { fatalError("OpenSSL could not sign") }
        ERR_clear_error()
        return certificate
    }

    private static func pem(_ certificate: OpaquePointer, key: OpaquePointer) -> TestCertificate {
        let certificatePEM = Self.write { PEM_write_bio_X509($0, certificate) }
        let keyPEM = Self.write { PEM_write_bio_PrivateKey($0, key, nil, nil, 0, nil, nil) }
        let pin = "sha256/" + (TLSSession.spkiSHA256Base64(certificate) ?? "")
        return TestCertificate(certificatePEM: certificatePEM, privateKeyPEM: keyPEM, pin: pin)
    }

    fileprivate static func write(_ body: (OpaquePointer) -> Int32) -> [UInt8] {
        guard let bio = BIO_new(BIO_s_mem()) else { fatalError("OpenSSL could not allocate a BIO") }
        defer { BIO_free(bio) }
        guard body(bio) == 1 else { fatalError("OpenSSL could not write PEM") }
        let count = Int(BIO_ctrl_pending(bio))
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            initialized = Int(max(0, BIO_read(bio, buffer.baseAddress, Int32(count))))
        }
    }

    /// The certificate and key of `pem`, which the caller frees.
    private static func read(_ pem: TestCertificate) -> (certificate: OpaquePointer, key: OpaquePointer) {
        do {
            let certificates = try PEM.certificates(.bytes(pem.certificatePEM), failure: .invalidCertificate)
            guard let certificate = certificates.first,
                case .key(let key) = PEM.privateKey(.bytes(pem.privateKeyPEM), passphrase: nil)
            else { fatalError("the CA's own PEM does not read back") }
            return (certificate, key)
        } catch {
            fatalError("the CA's own PEM does not read back: \(error)")
        }
    }
}
#endif
