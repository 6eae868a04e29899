import Foundation
import Testing
import TetherWire

/// The one pin rule that `TLSOptions`, the TLS context and `tether connect --pin` share.
@Suite struct SPKIPinTests {
    /// The SHA-256 of nothing, a digest with a known base64 text.
    static let emptyDigestPin = "sha256/47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="

    @Test func aWellFormedPinGivesItsDigestTextAndBytes() throws {
        let digest = try #require(SPKIPin.digest(of: Self.emptyDigestPin))
        #expect(digest.base64 == "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=")
        #expect(Data(digest.bytes) == Data(base64Encoded: digest.base64))
        #expect(digest.bytes.count == 32)
        #expect(digest.bytes.prefix(4) == [0xE3, 0xB0, 0xC4, 0x42])
    }

    @Test func everyByteValueRoundTrips() throws {
        for bytes in [[UInt8](repeating: 0, count: 32), [UInt8](repeating: 0xFF, count: 32), Array(0..<32)] {
            let pin = "sha256/" + Data(bytes).base64EncodedString()
            #expect(SPKIPin.digest(of: pin)?.bytes == bytes)
        }
    }

    @Test func malformedPinsAreRefused() {
        let body = String(Self.emptyDigestPin.dropFirst("sha256/".count))
        for pin in [
            "", "abc", "sha256/", "sha256/short", "sha1/" + body, "SHA256/" + body, body,
            "sha256/" + body.dropLast(),            // no padding
            "sha256/" + body + "=",                 // 45 characters
            "sha256/" + body.dropLast(2) + "==",    // the padding of 31 bytes
            "sha256/" + body.replacingOccurrences(of: "+", with: "-"),  // the URL-safe alphabet
            // The same 32 bytes with the two unused bits set: not the text any digest encodes to.
            "sha256/" + body.dropLast(2) + "V=",
        ] {
            #expect(!SPKIPin.isWellFormed(pin), "\(pin)")
        }
        #expect(SPKIPin.isWellFormed(Self.emptyDigestPin))
    }
}
