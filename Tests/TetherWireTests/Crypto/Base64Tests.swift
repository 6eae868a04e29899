import Testing
@testable import TetherWire

@Suite struct Base64Tests {
    // RFC 4648 §10 test vectors.
    static let vectors: [(String, String)] = [
        ("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE="),
        ("foobar", "Zm9vYmFy"),
    ]

    @Test func encodesRFC4648Vectors() {
        for (plain, encoded) in Self.vectors {
            #expect(Base64.encode(Array(plain.utf8)) == encoded)
        }
    }

    @Test func decodesRFC4648Vectors() {
        for (plain, encoded) in Self.vectors {
            #expect(Base64.decode(encoded) == Array(plain.utf8))
        }
    }

    @Test func rfc6455SampleKeyGivesSampleAccept() {
        let key = "dGhlIHNhbXBsZSBub25jZQ=="
        let accept = Base64.encode(SHA1.hash(Array((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8)))
        #expect(accept == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        #expect(Base64.decode(key) == Array("the sample nonce".utf8))
    }

    @Test func allByteValuesRoundTrip() {
        let bytes = (0...255).map { UInt8($0) }
        #expect(Base64.decode(Base64.encode(bytes)) == bytes)
        #expect(Base64.encode([0xFB, 0xFF, 0xBF]) == "+/+/")
    }

    @Test func rejectsNonCanonicalInput() {
        #expect(Base64.decode("Zg=") == nil)          // length not a multiple of 4
        #expect(Base64.decode("Zg") == nil)
        #expect(Base64.decode("Z===") == nil)         // padding in the second place
        #expect(Base64.decode("Zh==") == nil)         // non-zero bits under the padding
        #expect(Base64.decode("Zm9=Zm9v") == nil)     // padding before the last group
        #expect(Base64.decode("Zm9v Yg==") == nil)    // character outside the alphabet
        #expect(Base64.decode("Zm=v") == nil)         // data after padding
    }
}
