#if os(Linux)
import Foundation
import Testing
@testable import TetherPOSIX
import TetherTestServer

@Suite struct TLSSessionTests {
    private func trusting(_ certificates: TestCertificates) -> TLSClientOptions {
        TLSClientOptions(additionalTrustRoots: [.file(certificates.caFile)])
    }

    @Test func handshakeWithAnExtraCAThenDataFlowsBothWaysEncrypted() throws {
        let certificates = try TestCertificates.make()
        let pair = try TLSPair(client: self.trusting(certificates), certificate: certificates.validFile)
        #expect(pair.handshake())
        #expect(pair.client.isHandshakeComplete && pair.server.isHandshakeComplete)

        try Array("secret to the server".utf8).withUnsafeBytes { try pair.client.write($0) }
        var onTheWire: [UInt8] = []
        pair.client.takeCiphertext { onTheWire = Array($0) }
        #expect(!onTheWire.isEmpty)
        #expect(!String(decoding: onTheWire, as: UTF8.self).contains("secret"))
        onTheWire.withUnsafeBytes { pair.server.receive($0) }
        #expect(try TLSPair.readAll(pair.server) == Array("secret to the server".utf8))
        #expect(try pair.send("and back", from: pair.server, to: pair.client) == Array("and back".utf8))
    }

    @Test func ciphertextFedOneByteAtATimeGivesTheSamePlaintext() throws {
        let certificates = try TestCertificates.make()
        let pair = try TLSPair(client: self.trusting(certificates), certificate: certificates.validFile)
        #expect(pair.handshake())
        let message = String(repeating: "0123456789", count: 3000)  // more than one 16 KiB record
        try Array(message.utf8).withUnsafeBytes { try pair.server.write($0) }
        var ciphertext: [UInt8] = []
        pair.server.takeCiphertext { ciphertext = Array($0) }
        var received: [UInt8] = []
        for byte in ciphertext {
            [byte].withUnsafeBytes { pair.client.receive($0) }
            received += try TLSPair.readAll(pair.client)
        }
        #expect(received == Array(message.utf8))
        #expect(pair.client.bufferedCiphertext == 0)
    }

    /// `TLSStream` stops reading when `hasInput` is false, so it must stay true while any plaintext can still come
    /// out: ciphertext not yet decrypted, or a record OpenSSL has taken in and not yet handed out in full.
    @Test func hasInputStaysTrueUntilEveryReceivedRecordIsReadOut() throws {
        let certificates = try TestCertificates.make()
        let pair = try TLSPair(client: self.trusting(certificates), certificate: certificates.validFile)
        #expect(pair.connect())
        #expect(!pair.client.hasInput)
        // Two records (two writes), received in one piece, read four bytes at a time.
        try Array("first record".utf8).withUnsafeBytes { try pair.server.write($0) }
        try Array("second".utf8).withUnsafeBytes { try pair.server.write($0) }
        pair.server.takeCiphertext { pair.client.receive($0) }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4)
        var partlyHandedOut = false
        while pair.client.hasInput {
            guard case .bytes(let count) = try buffer.withUnsafeMutableBytes({ try pair.client.read(into: $0) }) else {
                Issue.record("hasInput was true, but the read found nothing")
                break
            }
            received += buffer[..<count]
            // The last record is all inside OpenSSL once its first bytes are out: only its buffer is left.
            if pair.client.bufferedCiphertext == 0, pair.client.hasInput { partlyHandedOut = true }
        }
        #expect(String(decoding: received, as: UTF8.self) == "first recordsecond")
        #expect(partlyHandedOut)
        #expect(try buffer.withUnsafeMutableBytes { try pair.client.read(into: $0) } == .needMore)
    }

    @Test func anIPLiteralIsVerifiedAgainstTheCertificatesAddresses() throws {
        let certificates = try TestCertificates.make()
        let pair = try TLSPair(
            client: self.trusting(certificates), serverName: "127.0.0.1", certificate: certificates.validFile)
        #expect(pair.handshake())
        let other = try TLSPair(
            client: self.trusting(certificates), serverName: "127.0.0.2", certificate: certificates.validFile)
        #expect(!other.handshake())
        #expect(other.clientFailure == .hostnameMismatch)
    }

    @Test func aHostNameOpenSSLRefusesToCheckFailsClosedBeforeAnyByteIsSent() throws {
        let certificates = try TestCertificates.make()
        // An embedded NUL: verified as "localhost" alone if the name were cut at it, refused with its length.
        let pair = try TLSPair(
            client: self.trusting(certificates), serverName: "localhost\0.example", certificate: certificates.validFile)
        #expect(throws: TLSFailure.hostCheckUnavailable) { try pair.client.handshake() }
        var sent = 0
        pair.client.takeCiphertext { sent += $0.count }
        #expect(sent == 0)  // no ClientHello
        #expect(TLSFailure.hostCheckUnavailable.isCertificateFailure)  // permanent: a retry would fail the same way
    }

    @Test func aCertificateForAnotherHostFailsAsHostnameMismatch() throws {
        let certificates = try TestCertificates.make()
        let pair = try TLSPair(client: self.trusting(certificates), certificate: certificates.wrongHostFile)
        #expect(!pair.handshake())
        #expect(pair.clientFailure == .hostnameMismatch)
        #expect(pair.clientFailure?.isCertificateFailure == true)
        #expect(!pair.client.isHandshakeComplete)
    }

    @Test func anExpiredCertificateFailsAsExpired() throws {
        let certificates = try TestCertificates.make()
        let pair = try TLSPair(client: self.trusting(certificates), certificate: certificates.expiredFile)
        #expect(!pair.handshake())
        #expect(pair.clientFailure == .certificateExpired)
    }

    @Test func withoutTheCAOrSelfSignedTheIssuerIsUntrusted() throws {
        let certificates = try TestCertificates.make()
        let unknownCA = try TLSPair(client: TLSClientOptions(), certificate: certificates.validFile)
        #expect(!unknownCA.handshake())
        #expect(unknownCA.clientFailure == .untrustedIssuer)
        let selfSigned = try TLSPair(client: self.trusting(certificates), certificate: certificates.selfSignedFile)
        #expect(!selfSigned.handshake())
        #expect(selfSigned.clientFailure == .untrustedIssuer)
        // The server learns of it through the client's alert.
        #expect(selfSigned.serverFailure != nil || !selfSigned.server.isHandshakeComplete)
    }

    @Test func aPinOfTheLeafOrOfTheCAMatches() throws {
        let certificates = try TestCertificates.make()
        for pin in [certificates.serverPin, certificates.caPin] {
            var options = self.trusting(certificates)
            options.pins = [pin]
            let pair = try TLSPair(client: options, certificate: certificates.validFile)
            #expect(pair.handshake())
        }
    }

    @Test func noMatchingPinFailsAsPinMismatchEvenWithAValidChain() throws {
        let certificates = try TestCertificates.make()
        var options = self.trusting(certificates)
        options.pins = ["sha256/" + String(repeating: "A", count: 43) + "="]
        let pair = try TLSPair(client: options, certificate: certificates.validFile)
        #expect(!pair.handshake())
        #expect(pair.clientFailure == .pinMismatch)
        #expect(!pair.client.isHandshakeComplete)
    }

    @Test func insecureSkipVerificationAcceptsAnUntrustedCertificateForAnotherHost() throws {
        let certificates = try TestCertificates.make()
        let pair = try TLSPair(
            client: TLSClientOptions(insecureSkipVerification: true), certificate: certificates.wrongHostFile)
        #expect(pair.handshake())
        // Pins still apply without verification.
        let pinned = try TLSPair(
            client: TLSClientOptions(pins: [certificates.caPin], insecureSkipVerification: true),
            certificate: certificates.selfSignedFile)
        #expect(!pinned.handshake())
        #expect(pinned.clientFailure == .pinMismatch)
    }

    @Test func aServerOfferingNothingNewerThanTLS11FailsAsProtocolVersionWhichIsNotACertificateFailure() throws {
        let authority = TestCertificateAuthority()
        var server = authority.issue().serverOptions
        server.legacyVersionsOnlyForTesting = true
        let pair = try TLSPair(
            client: TLSClientOptions(additionalTrustRoots: [.bytes(authority.certificate.certificatePEM)]),
            server: server)
        #expect(!pair.handshake())
        #expect(pair.clientFailure == .protocolVersion)
        #expect(pair.clientFailure?.description == "protocol version")
        #expect(pair.clientFailure?.isCertificateFailure == false)
        #expect(pair.serverFailure == .protocolVersion)  // it found no version in the client's offer
        #expect(!pair.client.isHandshakeComplete && !pair.server.isHandshakeComplete)
    }

    @Test func closeNotifyEndsThePeersPlaintext() throws {
        let certificates = try TestCertificates.make()
        let pair = try TLSPair(client: self.trusting(certificates), certificate: certificates.validFile)
        #expect(pair.handshake())
        try Array("last words".utf8).withUnsafeBytes { try pair.client.write($0) }
        pair.client.shutdown()
        pair.client.takeCiphertext { pair.server.receive($0) }
        var buffer = [UInt8](repeating: 0, count: 64)
        #expect(try buffer.withUnsafeMutableBytes { try pair.server.read(into: $0) } == .bytes(10))
        #expect(try buffer.withUnsafeMutableBytes { try pair.server.read(into: $0) } == .closed)
        #expect(pair.server.receivedCloseNotify)
    }

    @Test func garbageAfterTheHandshakeIsAProtocolError() throws {
        let certificates = try TestCertificates.make()
        let pair = try TLSPair(client: self.trusting(certificates), certificate: certificates.validFile)
        #expect(pair.handshake())
        [UInt8](repeating: 0x17, count: 64).withUnsafeBytes { pair.client.receive($0) }
        #expect(throws: TLSFailure.self) { try TLSPair.readAll(pair.client) }
    }

    @Test func malformedOptionsAreConfigurationErrors() throws {
        let certificates = try TestCertificates.make()
        #expect(throws: TLSConfigurationError.invalidPin) { try TLSContext.client(TLSClientOptions(pins: ["abc"])) }
        #expect(throws: TLSConfigurationError.invalidPin) {
            try TLSContext.client(TLSClientOptions(pins: ["sha1/" + String(repeating: "A", count: 27) + "="]))
        }
        #expect(throws: TLSConfigurationError.invalidTrustRoots) {
            try TLSContext.client(TLSClientOptions(additionalTrustRoots: [.bytes(Array("not pem".utf8))]))
        }
        #expect(throws: TLSConfigurationError.invalidTrustRoots) {
            try TLSContext.client(TLSClientOptions(additionalTrustRoots: [.file(certificates.path("missing.pem"))]))
        }
        // An in-memory CA works like the file.
        let inMemory = TLSClientOptions(additionalTrustRoots: [.bytes(certificates.bytes(certificates.caFile))])
        _ = try TLSContext.client(inMemory)
        #expect(throws: TLSConfigurationError.invalidPrivateKey) {
            // The CA's key does not match the server certificate.
            try TLSContext.server(TLSServerOptions(
                certificateChain: .file(certificates.validFile), privateKey: .file(certificates.path("ca.key"))))
        }
    }

    // MARK: - TestCertificateAuthority (made with the library, for tests that cannot run the openssl command)

    @Test func theTestAuthoritysCertificatesVerifyAndFailLikeTheCommandsOnes() throws {
        let authority = TestCertificateAuthority()
        let trusting = TLSClientOptions(additionalTrustRoots: [.bytes(authority.certificate.certificatePEM)])
        let valid = authority.issue()
        for host in ["localhost", "127.0.0.1", "::1"] {
            let pair = try TLSPair(client: trusting, serverName: host, server: valid.serverOptions)
            #expect(pair.handshake(), "\(host)")
        }
        let cases: [(TestCertificate, TLSFailure)] = [
            (authority.issue(notBefore: -2 * 86_400, notAfter: -86_400), .certificateExpired),
            (authority.issue(notBefore: 86_400, notAfter: 2 * 86_400), .certificateNotYetValid),
            (authority.issue(hosts: ["wrong.example"]), .hostnameMismatch),
            (TestCertificateAuthority.selfSigned(), .untrustedIssuer),
            (TestCertificateAuthority().issue(), .untrustedIssuer),
        ]
        for (certificate, failure) in cases {
            let pair = try TLSPair(client: trusting, server: certificate.serverOptions)
            #expect(!pair.handshake())
            #expect(pair.clientFailure == failure)
        }
        var pinned = trusting
        pinned.pins = [valid.pin]
        #expect(try TLSPair(client: pinned, server: valid.serverOptions).handshake())
        pinned.pins = [authority.certificate.pin]
        #expect(try TLSPair(client: pinned, server: valid.serverOptions).handshake())
        pinned.pins = [authority.issue().pin]  // another key
        let mismatch = try TLSPair(client: pinned, server: valid.serverOptions)
        #expect(!mismatch.handshake())
        #expect(mismatch.clientFailure == .pinMismatch)
    }

    @Test func theTestAuthoritysPinIsTheOneTheOpensslCommandComputes() throws {
        let certificates = try TestCertificates.make()
        let certificate = TestCertificateAuthority().issue()
        let file = certificates.path("generated-\(UInt32.random(in: 0...UInt32.max)).pem")
        #expect(FileManager.default.createFile(atPath: file, contents: Data(certificate.certificatePEM)))
        #expect(try TestCertificates.pin(ofCertificate: file) == certificate.pin)
    }
}
#endif
