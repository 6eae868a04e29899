#if os(Linux)
import Foundation
import Testing
@testable import TetherPOSIX
import TetherTestServer

/// Mutual TLS between two in-memory sessions: a server that requires a client certificate from its CA.
@Suite struct TLSClientCertificateTests {
    private static let authority = TestCertificateAuthority(commonName: "Client CA")
    private static let serverCertificate = TestCertificateAuthority().issue()

    /// A server requiring certificates from `authority`, TLS 1.2 only when asked.
    private func server(tls12: Bool) -> TLSServerOptions {
        var options = Self.serverCertificate.serverTLS(requiringClientCertificatesFrom: Self.authority.certificate)
            .options
        options.tls12OnlyForTesting = tls12
        return options
    }

    private func client(_ certificate: TestCertificate?, key: [UInt8]? = nil, passphrase: String? = nil)
        -> TLSClientOptions
    {
        TLSClientOptions(
            insecureSkipVerification: true,
            clientIdentity: certificate.map {
                TLSClientIdentity(
                    certificateChain: .bytes($0.certificatePEM), privateKey: .bytes(key ?? $0.privateKeyPEM),
                    passphrase: passphrase)
            })
    }

    /// The handshake, then (when the client's side completed) a read, where a TLS 1.3 server's refusal arrives.
    private func connect(_ client: TLSClientOptions, tls12: Bool) throws -> TLSPair {
        let pair = try TLSPair(client: client, server: self.server(tls12: tls12))
        if !pair.handshake(), pair.clientFailure == nil {
            do { _ = try TLSPair.readAll(pair.client) } catch { pair.clientFailure = error as? TLSFailure }
        }
        return pair
    }

    @Test(arguments: [false, true]) func anAcceptedCertificatesSubjectIsWhatTheServerSees(tls12: Bool) throws {
        let pair = try self.connect(self.client(Self.authority.issueClient(commonName: "device-7")), tls12: tls12)
        #expect(pair.clientFailure == nil && pair.serverFailure == nil)
        #expect(pair.server.peerCertificateSubject == "CN=device-7")
        #expect(try pair.send("hello", from: pair.client, to: pair.server) == Array("hello".utf8))
    }

    @Test(arguments: [false, true]) func withoutACertificateBothSidesSayItWasRequired(tls12: Bool) throws {
        let pair = try self.connect(self.client(nil), tls12: tls12)
        #expect(pair.serverFailure == .clientCertificateRequired)
        // TLS 1.3: on the first read after the client's handshake completed; TLS 1.2: in the handshake.
        #expect(pair.client.isHandshakeComplete == !tls12)
        #expect(pair.clientFailure == .clientCertificateRequired)
        #expect(pair.clientFailure?.isCertificateFailure == true)
        #expect(pair.clientFailure?.description == "client certificate required")
    }

    @Test(arguments: [false, true]) func aCertificateFromAnotherCAIsRejectedAsUnknownCA(tls12: Bool) throws {
        let other = TestCertificateAuthority(commonName: "Other CA").issueClient(commonName: "intruder")
        let pair = try self.connect(self.client(other), tls12: tls12)
        #expect(pair.serverFailure == .untrustedIssuer)
        #expect(pair.clientFailure == .clientCertificateRejected(alert: "unknown ca"))
        #expect(pair.clientFailure?.isCertificateFailure == true)
        #expect(pair.server.peerCertificateSubject == nil)
    }

    @Test(arguments: [false, true]) func anExpiredCertificateIsRejectedAsExpired(tls12: Bool) throws {
        let expired = Self.authority.issueClient(commonName: "old", notBefore: -7200, notAfter: -3600)
        let pair = try self.connect(self.client(expired), tls12: tls12)
        #expect(pair.serverFailure == .certificateExpired)
        #expect(pair.clientFailure == .clientCertificateRejected(alert: "certificate expired"))
        #expect(pair.clientFailure?.description == "client certificate rejected: certificate expired")
    }

    @Test func anEncryptedKeyIsReadWithItsPassphrase() throws {
        let certificate = Self.authority.issueClient(commonName: "sealed")
        let encrypted = certificate.encryptedPrivateKeyPEM(passphrase: "open sesame")
        #expect(String(decoding: encrypted, as: UTF8.self).contains("ENCRYPTED"))
        let pair = try self.connect(
            self.client(certificate, key: encrypted, passphrase: "open sesame"), tls12: false)
        #expect(pair.clientFailure == nil && pair.server.peerCertificateSubject == "CN=sealed")
        for passphrase in ["wrong", nil] {
            #expect(throws: TLSConfigurationError.clientKeyPassphrase) {
                try TLSContext.client(self.client(certificate, key: encrypted, passphrase: passphrase))
            }
        }
    }

    @Test func aPKCS12ArchiveIsReadWithItsPassphrase() throws {
        let certificate = Self.authority.issueClient(commonName: "archived")
        let archive = certificate.pkcs12(passphrase: "p12")
        let pair = try TLSPair(
            client: TLSClientOptions(
                insecureSkipVerification: true,
                clientIdentity: TLSClientIdentity(pkcs12: .bytes(archive), passphrase: "p12")),
            server: self.server(tls12: false))
        #expect(pair.connect())
        #expect(pair.server.peerCertificateSubject == "CN=archived")
        #expect(throws: TLSConfigurationError.clientKeyPassphrase) {
            try TLSContext.check(TLSClientIdentity(pkcs12: .bytes(archive), passphrase: "not it"))
        }
        #expect(throws: TLSConfigurationError.invalidClientArchive) {
            try TLSContext.check(TLSClientIdentity(pkcs12: .bytes(certificate.certificatePEM), passphrase: "p12"))
        }
    }

    @Test func aKeyThatIsNotTheCertificatesOrUnreadableSourcesAreConfigurationErrors() throws {
        let certificate = Self.authority.issueClient(commonName: "one")
        let otherKey = Self.authority.issueClient(commonName: "two").privateKeyPEM
        let mismatch = TLSClientIdentity(
            certificateChain: .bytes(certificate.certificatePEM), privateKey: .bytes(otherKey))
        #expect(throws: TLSConfigurationError.clientKeyMismatch) { try TLSContext.check(mismatch) }
        #expect(throws: TLSConfigurationError.clientKeyMismatch) {
            try TLSContext.client(TLSClientOptions(clientIdentity: mismatch))
        }
        let missingChain = TLSClientIdentity(
            certificateChain: .file("/nonexistent/c.pem"), privateKey: .bytes(otherKey))
        #expect(throws: TLSConfigurationError.invalidClientCertificate) { try TLSContext.check(missingChain) }
        let missingKey = TLSClientIdentity(
            certificateChain: .bytes(certificate.certificatePEM), privateKey: .file("/nonexistent/k.pem"))
        #expect(throws: TLSConfigurationError.invalidClientKey) { try TLSContext.check(missingKey) }
        let notAKey = TLSClientIdentity(
            certificateChain: .bytes(certificate.certificatePEM), privateKey: .bytes(certificate.certificatePEM))
        #expect(throws: TLSConfigurationError.invalidClientKey) { try TLSContext.check(notAKey) }
    }

    @Test func theIdentityNeverShowsItsKeyOrPassphrase() {
        let certificate = Self.authority.issueClient(commonName: "quiet")
        let identity = TLSClientIdentity(
            certificateChain: .bytes(certificate.certificatePEM),
            privateKey: .bytes(certificate.encryptedPrivateKeyPEM(passphrase: "hunter2-passphrase")),
            passphrase: "hunter2-passphrase")
        let options = TLSClientOptions(clientIdentity: identity)
        var texts = [
            "\(identity)", String(reflecting: identity), "\(options)", String(reflecting: options),
            "\(Optional(identity) as Any)", "\([identity])", String(reflecting: [identity]),
        ]
        for value in [identity as Any, Optional(identity) as Any, [identity] as Any, options as Any] {
            var dumped = ""
            dump(value, to: &dumped)
            texts.append(dumped)
            texts.append("\(Mirror(reflecting: value).children.map { "\($0.value)" })")
        }
        for text in texts {
            #expect(!text.contains("hunter2"), "\(text)")
            #expect(!text.contains("ENCRYPTED PRIVATE KEY"), "\(text)")
        }
        #expect("\(identity)" == "TLSClientIdentity(PEM, key redacted, passphrase redacted)")
    }
}
#endif
