import Foundation
import Testing
import TetherCore
@testable import Tether
#if os(Linux)
import TetherPOSIX
import TetherTestServer
#endif

/// The decision `URLSessionTransport` makes once the platform evaluated the server's chain: the same rules, pin
/// format and failures as `SocketTransport`'s.
@Suite struct ServerTrustPolicyTests {
    static let serverKey: [UInt8] = [0x30, 0x03, 0x02, 0x01, 0x07]  // stands for a leaf's SPKI
    static let issuerKey: [UInt8] = [0x30, 0x03, 0x02, 0x01, 0x09]  // stands for its issuer's

    static func pin(_ spki: [UInt8]) -> String { "sha256/" + Data(SHA256.hash(spki)).base64EncodedString() }

    @Test func withoutRootsPinsOrSkippingThePlatformDecidesAlone() {
        #expect(ServerTrustPolicy(TLSOptions()).isPlatformDefault)
        #expect(!ServerTrustPolicy(TLSOptions(pins: [Self.pin(Self.serverKey)])).isPlatformDefault)
        #expect(!ServerTrustPolicy(TLSOptions(additionalTrustRoots: [.pemFile("/ca.pem")])).isPlatformDefault)
        #expect(!ServerTrustPolicy(TLSOptions(insecureSkipVerification: true)).isPlatformDefault)
    }

    @Test func aChainThatDoesNotVerifyIsRefusedWithItsReason() {
        let policy = ServerTrustPolicy(TLSOptions(additionalTrustRoots: [.pemFile("/ca.pem")]))
        #expect(policy.decide(evaluation: .trusted, chain: [Self.serverKey]) == nil)
        for failure in [ServerTrustFailure.untrustedIssuer, .hostnameMismatch, .certificateExpired] {
            #expect(policy.decide(evaluation: .rejected(failure), chain: [Self.serverKey]) == failure)
        }
    }

    @Test func pinsMatchAnyCertificateOfTheVerifiedChain() {
        let policy = ServerTrustPolicy(TLSOptions(pins: [Self.pin(Self.issuerKey)]))
        #expect(policy.decide(evaluation: .trusted, chain: [Self.serverKey, Self.issuerKey]) == nil)
        #expect(policy.decide(evaluation: .trusted, chain: [Self.serverKey]) == .pinMismatch)
        // A key whose SPKI could not be rebuilt matches nothing.
        #expect(policy.decide(evaluation: .trusted, chain: [nil, Self.serverKey]) == .pinMismatch)
        // Verification comes first: a matching pin does not rescue a chain that does not verify.
        #expect(policy.decide(evaluation: .rejected(.untrustedIssuer), chain: [Self.issuerKey]) == .untrustedIssuer)
    }

    @Test func skippingVerificationAcceptsAnyChainButPinsStillApply() {
        let skip = ServerTrustPolicy(TLSOptions(insecureSkipVerification: true))
        #expect(skip.decide(evaluation: .rejected(.untrustedIssuer), chain: [Self.serverKey]) == nil)
        let pinned = ServerTrustPolicy(TLSOptions(pins: [Self.pin(Self.issuerKey)], insecureSkipVerification: true))
        #expect(pinned.decide(evaluation: .rejected(.hostnameMismatch), chain: [Self.serverKey]) == .pinMismatch)
        #expect(pinned.decide(evaluation: .rejected(.hostnameMismatch), chain: [Self.issuerKey]) == nil)
    }

    /// A refusal ends the connection as `SocketTransport` ends it: `tls_failed`, the same detail, not retried.
    @Test func refusalsReadAsSocketTransportsAndAreNotRetried() {
        #expect(ServerTrustFailure.pinMismatch.end == .tlsFailed(detail: "pin mismatch", permanent: true))
        #expect(CloseReason(ServerTrustFailure.untrustedIssuer.end) == .tlsFailed(detail: "untrusted issuer"))
        #if os(Linux)
        let pairs: [(ServerTrustFailure, TLSFailure)] = [
            (.hostnameMismatch, .hostnameMismatch), (.certificateExpired, .certificateExpired),
            (.certificateNotYetValid, .certificateNotYetValid), (.untrustedIssuer, .untrustedIssuer),
            (.pinMismatch, .pinMismatch),
        ]
        for (apple, linux) in pairs {
            #expect(apple.detail == linux.description)
        }
        #expect(ServerTrustFailure.unreadableTrustRoots.detail == TLSConfigurationError.invalidTrustRoots.description)
        #endif
    }

    #if os(Linux)
    /// PEM made by the test server's certificate authority (OpenSSL, Linux only).
    @Test func trustRootsAreReadFromPEMTextAndFiles() throws {
        let authority = TestCertificateAuthority()
        let other = TestCertificateAuthority(commonName: "Another CA")
        let pem = Data(authority.certificate.certificatePEM + other.certificate.certificatePEM)
        let fromText = try #require(ServerTrustPolicy.derCertificates(inPEM: pem))
        #expect(fromText.count == 2 && fromText.allSatisfy { $0.first == 0x30 } && fromText[0] != fromText[1])

        let file = FileManager.default.temporaryDirectory.appendingPathComponent("tether-roots-\(UUID()).pem")
        try pem.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let policy = ServerTrustPolicy(TLSOptions(additionalTrustRoots: [.pemFile(file.path), .pem(pem)]))
        #expect(policy.trustRootCertificates() == fromText + fromText)
    }
    #endif

    @Test func unreadableTrustRootsAreNoCertificates() {
        let missing = ServerTrustPolicy(TLSOptions(additionalTrustRoots: [.pemFile("/nonexistent/tether-ca.pem")]))
        #expect(missing.trustRootCertificates() == nil)
        let empty = ServerTrustPolicy(TLSOptions(additionalTrustRoots: [.pem(Data("no certificate".utf8))]))
        #expect(empty.trustRootCertificates() == nil)
        let unclosed = Data("-----BEGIN CERTIFICATE-----\nMIIB\n".utf8)
        #expect(ServerTrustPolicy.derCertificates(inPEM: unclosed) == nil)
        let garbled = Data("-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n".utf8)
        #expect(ServerTrustPolicy.derCertificates(inPEM: garbled) == nil)
    }
}
