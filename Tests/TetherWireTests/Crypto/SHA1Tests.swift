import Testing
@testable import TetherWire

@Suite struct SHA1Tests {
    // RFC 3174 §7.3 test vectors.
    @Test func abcHashesToRFC3174Vector() {
        #expect(hexString(SHA1.hash(Array("abc".utf8))) == "a9993e364706816aba3e25717850c26c9cd0d89d")
    }

    @Test func twoBlockMessageHashesToRFC3174Vector() {
        let text = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"
        #expect(hexString(SHA1.hash(Array(text.utf8))) == "84983e441c3bd26ebaae4aa1f95129e5e54670f1")
    }

    @Test func millionAsHashesToRFC3174Vector() {
        #expect(hexString(SHA1.hash(repeatElement(UInt8(ascii: "a"), count: 1_000_000)))
            == "34aa973cd4c4daa4f61eeb2bdbad27316534016f")
    }

    @Test func repeated01234567HashesToRFC3174Vector() {
        let block = Array("0123456701234567012345670123456701234567012345670123456701234567".utf8)
        let input = (0..<10).flatMap { _ in block }
        #expect(hexString(SHA1.hash(input)) == "dea356a2cddd90c7a7ecedc5ebb563934f460452")
    }

    @Test func emptyInputHashesToKnownDigest() {
        #expect(hexString(SHA1.hash([])) == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
    }

    @Test func inputsAroundThePaddingBoundaryMatchStreamingDefinition() {
        // 55, 56, 63, 64 and 65 bytes exercise the one-block and two-block padding paths.
        #expect(hexString(SHA1.hash(repeatElement(UInt8(ascii: "a"), count: 55)))
            == "c1c8bbdc22796e28c0e15163d20899b65621d65a")
        #expect(hexString(SHA1.hash(repeatElement(UInt8(ascii: "a"), count: 56)))
            == "c2db330f6083854c99d4b5bfb6e8f29f201be699")
        #expect(hexString(SHA1.hash(repeatElement(UInt8(ascii: "a"), count: 64)))
            == "0098ba824b5c16427bd7a1122a5a442a25ec644d")
    }
}
