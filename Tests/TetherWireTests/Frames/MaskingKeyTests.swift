import Testing
@testable import TetherWire

@Suite struct MaskingKeyTests {
    /// The definition from RFC 6455 §5.3: octet i is XORed with key octet i MOD 4.
    func reference(_ bytes: [UInt8], key: MaskingKey, offset: Int) -> [UInt8] {
        let keyBytes = key.bytes
        return bytes.enumerated().map { $0.element ^ keyBytes[($0.offset + offset) % 4] }
    }

    @Test func rfcKeyMasksHello() {
        var bytes = Array("Hello".utf8)
        bytes.withUnsafeMutableBytes { MaskingKey(value: 0x37FA_213D).apply(to: $0) }
        #expect(bytes == hex("7f 9f 4d 51 58"))
    }

    @Test func wordWiseMaskingMatchesDefinitionForEveryAlignmentLengthAndOffset() {
        var random = SeededRandom(seed: 42)
        let source = (0..<300).map { _ in UInt8.random(in: 0...255, using: &random) }
        let key = MaskingKey(value: 0xA1B2_C3D4)
        for alignment in 0..<8 {
            for length in [0, 1, 3, 7, 8, 9, 15, 16, 17, 31, 64, 100, 257] {
                for offset in 0..<4 {
                    var buffer = source
                    let range = alignment..<(alignment + length)
                    buffer.withUnsafeMutableBytes {
                        key.apply(to: UnsafeMutableRawBufferPointer(rebasing: $0[range]), offset: offset)
                    }
                    #expect(Array(buffer[range]) == self.reference(Array(source[range]), key: key, offset: offset))
                    #expect(buffer[..<alignment] == source[..<alignment])
                    #expect(buffer[range.upperBound...] == source[range.upperBound...])
                }
            }
        }
    }

    @Test func maskedCopyMatchesDefinitionForEveryAlignmentOfBothBuffersLengthAndOffset() {
        var random = SeededRandom(seed: 7)
        let source = (0..<300).map { _ in UInt8.random(in: 0...255, using: &random) }
        let key = MaskingKey(value: 0x5EED_F00D)
        for sourceAlignment in [0, 1, 3, 5] {
            for destinationAlignment in 0..<8 {
                for length in [0, 1, 3, 7, 8, 9, 15, 16, 17, 31, 64, 100, 257] {
                    for offset in 0..<4 {
                        let range = sourceAlignment..<(sourceAlignment + length)
                        var destination = [UInt8](repeating: 0xEE, count: destinationAlignment + length + 8)
                        let target = destinationAlignment..<(destinationAlignment + length)
                        source.withUnsafeBytes { from in
                            destination.withUnsafeMutableBytes { to in
                                key.apply(
                                    copying: UnsafeRawBufferPointer(rebasing: from[range]),
                                    to: UnsafeMutableRawBufferPointer(rebasing: to[target]), offset: offset)
                            }
                        }
                        #expect(
                            Array(destination[target])
                                == self.reference(Array(source[range]), key: key, offset: offset))
                        // Not a byte outside the destination is touched.
                        #expect(destination[..<target.lowerBound].allSatisfy { $0 == 0xEE })
                        #expect(destination[target.upperBound...].allSatisfy { $0 == 0xEE })
                    }
                }
            }
        }
    }

    @Test func maskingInTwoPiecesWithOffsetEqualsMaskingAtOnce() {
        let source = (0..<50).map { UInt8($0) }
        let key = MaskingKey(0x01, 0x02, 0x04, 0x08)
        var whole = source
        whole.withUnsafeMutableBytes { key.apply(to: $0) }
        var pieces = source
        pieces.withUnsafeMutableBytes {
            key.apply(to: UnsafeMutableRawBufferPointer(rebasing: $0[..<13]))
            key.apply(to: UnsafeMutableRawBufferPointer(rebasing: $0[13...]), offset: 13)
        }
        #expect(whole == pieces)
    }

    @Test func maskingTwiceRestoresTheBytes() {
        let source = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        var bytes = source
        let key = MaskingKey(value: 0xDEAD_BEEF)
        bytes.withUnsafeMutableBytes { key.apply(to: $0) }
        #expect(bytes != source)
        bytes.withUnsafeMutableBytes { key.apply(to: $0) }
        #expect(bytes == source)
    }
}
