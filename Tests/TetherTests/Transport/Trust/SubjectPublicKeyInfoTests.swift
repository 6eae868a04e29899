import Foundation
import Testing
@testable import Tether

/// The SubjectPublicKeyInfo rebuilt from a key's raw bytes (what Apple's Security framework hands out) is the one
/// OpenSSL encodes for the same key, byte for byte, for every kind of key a server certificate carries; so a pin
/// computed with `openssl` or `curl` matches on Apple platforms as on Linux.
@Suite(.serialized) struct SubjectPublicKeyInfoTests {
    static let kinds: [(name: String, algorithm: [String], kind: SubjectPublicKeyInfo.KeyKind)] = [
        ("RSA 2048", OpenSSLKey.rsa(bits: 2048), .rsa),
        ("RSA 3072", OpenSSLKey.rsa(bits: 3072), .rsa),
        ("RSA 4096", OpenSSLKey.rsa(bits: 4096), .rsa),
        ("EC P-256", OpenSSLKey.ellipticCurve("P-256"), .ellipticCurve),
        ("EC P-384", OpenSSLKey.ellipticCurve("P-384"), .ellipticCurve),
        ("EC P-521", OpenSSLKey.ellipticCurve("P-521"), .ellipticCurve),
    ]

    @Test(arguments: 0..<6)
    func rebuiltSubjectPublicKeyInfoIsOpenSSLs(_ index: Int) async throws {
        let (name, algorithm, kind) = Self.kinds[index]
        let key = try await OpenSSLKey.generated(algorithm)
        let rebuilt = SubjectPublicKeyInfo.der(kind: kind, rawKey: key.rawKey)
        #expect(rebuilt == key.subjectPublicKeyInfo, "\(name)")
        // And so the pin: the same digest as `openssl dgst -sha256` of OpenSSL's SPKI.
        #expect(SHA256.hash(rebuilt ?? []) == (try OpenSSLKey.sha256(key.subjectPublicKeyInfo)), "\(name)")
    }

    @Test func rawBytesThatAreNotTheKindAreRefused() {
        #expect(SubjectPublicKeyInfo.der(kind: .rsa, rawKey: []) == nil)
        #expect(SubjectPublicKeyInfo.der(kind: .rsa, rawKey: [0x30, 0x05, 0x02, 0x01]) == nil)  // cut short
        #expect(SubjectPublicKeyInfo.der(kind: .rsa, rawKey: [0x04] + [UInt8](repeating: 1, count: 64)) == nil)
        #expect(SubjectPublicKeyInfo.der(kind: .ellipticCurve, rawKey: [0x02] + [UInt8](repeating: 1, count: 32)) == nil)
        #expect(SubjectPublicKeyInfo.der(kind: .ellipticCurve, rawKey: [0x04] + [UInt8](repeating: 1, count: 50)) == nil)
    }

    /// FIPS 180-4's examples, and inputs across the padding's block boundary (55, 56, 64 bytes) against OpenSSL.
    @Test func sha256MatchesTheStandardAndOpenSSL() throws {
        func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
        #expect(hex(SHA256.hash([])) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(hex(SHA256.hash(Array("abc".utf8))) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        for length in [55, 56, 63, 64, 65, 1000] {
            let input = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
            #expect(SHA256.hash(input) == (try OpenSSLKey.sha256(input)), "length \(length)")
        }
    }
}
