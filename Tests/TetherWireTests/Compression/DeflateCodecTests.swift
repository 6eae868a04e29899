import Testing

@testable import TetherWire

@Suite struct DeflateCodecTests {
    static let hello = Array("Hello".utf8)

    func compress(_ message: [UInt8], with compressor: DeflateCompressor) throws -> [UInt8] {
        var output: [UInt8] = []
        try message.withUnsafeBytes { bytes in
            try compressor.compress(bytes, appendingTo: &output)
        }
        return output
    }

    /// Inflates one message delivered in `frames` (its payload split as a peer might fragment it).
    func inflate(_ frames: [[UInt8]], with decompressor: DeflateDecompressor, maximumSize: Int = 1 << 20)
        throws -> [UInt8]
    {
        var output: [UInt8] = []
        for frame in frames {
            try frame.withUnsafeBytes { bytes in
                try decompressor.inflate(bytes, appendingTo: &output, maximumSize: maximumSize)
            }
        }
        try decompressor.finishMessage(appendingTo: &output, maximumSize: maximumSize)
        return output
    }

    // RFC 7692 §7.2.3: the examples, byte for byte.

    @Test func helloCompressesToTheRFCsBytes() throws {
        let compressor = DeflateCompressor(windowBits: 15, noContextTakeover: false)
        #expect(try self.compress(Self.hello, with: compressor) == hex("f2 48 cd c9 c9 07 00"))
        // §7.2.3.2: with context takeover the second "Hello" refers back to the first.
        #expect(try self.compress(Self.hello, with: compressor) == hex("f2 00 11 00 00"))
    }

    @Test func withoutContextTakeoverEveryMessageCompressesAlone() throws {
        let compressor = DeflateCompressor(windowBits: 15, noContextTakeover: true)
        #expect(try self.compress(Self.hello, with: compressor) == hex("f2 48 cd c9 c9 07 00"))
        #expect(try self.compress(Self.hello, with: compressor) == hex("f2 48 cd c9 c9 07 00"))
    }

    @Test func theRFCsExamplesInflate() throws {
        let decompressor = DeflateDecompressor(windowBits: 15, noContextTakeover: false)
        #expect(try self.inflate([hex("f2 48 cd c9 c9 07 00")], with: decompressor) == Self.hello)
        #expect(try self.inflate([hex("f2 00 11 00 00")], with: decompressor) == Self.hello)
        // §7.2.3.1, fragmented: the payload split across frames.
        #expect(try self.inflate([hex("f2 48"), hex("cd c9 c9 07 00")], with: decompressor) == Self.hello)
        // §7.2.3.3: a stored (uncompressed) block.
        #expect(try self.inflate([hex("00 05 00 fa ff 48 65 6c 6c 6f 00")], with: decompressor) == Self.hello)
        // §7.2.3.4: a block with BFINAL set ends the stream; the next message starts a fresh context.
        #expect(try self.inflate([hex("f3 48 cd c9 c9 07 00 00")], with: decompressor) == Self.hello)
        #expect(try self.inflate([hex("f2 48 cd c9 c9 07 00")], with: decompressor) == Self.hello)
    }

    @Test func anEmptyMessageIsOneByteAndInflatesToNothing() throws {
        let compressor = DeflateCompressor(windowBits: 15, noContextTakeover: false)
        #expect(try self.compress([], with: compressor) == hex("00"))
        let decompressor = DeflateDecompressor(windowBits: 15, noContextTakeover: false)
        #expect(try self.inflate([hex("00")], with: decompressor) == [])
        #expect(try self.inflate([], with: decompressor) == [])
    }

    /// An empty message right after another (context takeover) is still the empty stored block's header byte: zlib
    /// emits nothing for it, and the second of two such messages used to inflate to garbage (the fuzzer found it).
    @Test func emptyMessagesAfterAMessageAreOneByteEachAndInflateToNothing() throws {
        let compressor = DeflateCompressor(windowBits: 9, noContextTakeover: false)
        let decompressor = DeflateDecompressor(windowBits: 9, noContextTakeover: false)
        for message in [Array("llo".utf8), [], [], Array("llo".utf8), []] {
            let compressed = try self.compress(message, with: compressor)
            if message.isEmpty { #expect(compressed == hex("00")) }
            #expect(try self.inflate([compressed], with: decompressor) == message)
        }
    }

    @Test func messagesRoundTripForEveryWindowWithAndWithoutTakeover() throws {
        var random = SeededRandom(seed: 7)
        let words = ["{\"price\":", "\"symbol\":\"", "AAPL", "MSFT", "\"}", ",\"size\":", "1", "2", "99.5"]
        for bits in PerMessageDeflateOffer.windowBitsRange {
            for takeover in [false, true] {
                let compressor = DeflateCompressor(windowBits: bits, memoryLevel: 1 + bits % 9,
                    noContextTakeover: !takeover)
                let decompressor = DeflateDecompressor(windowBits: bits, noContextTakeover: !takeover)
                for _ in 0..<20 {
                    var message: [UInt8] = []
                    for _ in 0..<Int(random.next() % 400) {
                        message += Array(words[Int(random.next() % UInt64(words.count))].utf8)
                    }
                    let compressed = try self.compress(message, with: compressor)
                    let cut = compressed.isEmpty ? 0 : Int(random.next() % UInt64(compressed.count))
                    let frames = [Array(compressed[..<cut]), Array(compressed[cut...])]
                    #expect(try self.inflate(frames, with: decompressor) == message, "window \(bits)")
                }
            }
        }
    }

    @Test func garbageIsInvalidData() {
        let decompressor = DeflateDecompressor(windowBits: 15, noContextTakeover: false)
        #expect(throws: CompressionError.invalidData) { try self.inflate([hex("ff ff ff ff")], with: decompressor) }
    }

    @Test func aBombStopsAtTheLimitHavingWrittenNoMoreThanIt() throws {
        let bomb = DeflateBomb.payload(inflatedMebibytes: 1024)
        #expect(bomb.count < 1_100_000)
        let decompressor = DeflateDecompressor(windowBits: 15, noContextTakeover: false)
        var output: [UInt8] = []
        let limit = 16 << 20
        #expect(throws: CompressionError.tooLarge(limit: limit)) {
            try bomb.withUnsafeBytes { bytes in
                try decompressor.inflate(bytes, appendingTo: &output, maximumSize: limit)
            }
        }
        #expect(output.count == limit + 1)
        #expect(output.prefix(4096).allSatisfy { $0 == 0 } && output.suffix(4096).allSatisfy { $0 == 0 })
    }

    @Test func inflationPausesAtItsLimitAndResumesWithTheRest() throws {
        let bomb = DeflateBomb.payload(inflatedMebibytes: 3)
        let decompressor = DeflateDecompressor(windowBits: 15, noContextTakeover: false)
        var total = 0
        var offset = 0
        var steps = 0
        while offset < bomb.count {
            var output: [UInt8] = []
            let consumed = try bomb[offset...].withUnsafeBytes { bytes in
                try decompressor.inflate(bytes, appendingTo: &output, limit: 256 << 10)
            }
            #expect(output.count <= 256 << 10)
            total += output.count
            offset += consumed
            steps += 1
        }
        var rest: [UInt8] = []
        try decompressor.finishMessage(appendingTo: &rest, maximumSize: 1 << 20)
        #expect(total + rest.count == 3 << 20)
        #expect(steps >= 3 * 4)
    }

    @Test func zlibStateIsAllocatedOnFirstUseAndFreedOnRelease() throws {
        let compressor = DeflateCompressor(windowBits: 15, noContextTakeover: false)
        let decompressor = DeflateDecompressor(windowBits: 15, noContextTakeover: false)
        #expect(!compressor.isAllocated && !decompressor.isAllocated)
        let compressed = try self.compress(Self.hello, with: compressor)
        #expect(compressor.isAllocated)
        #expect(try self.inflate([compressed], with: decompressor) == Self.hello)
        #expect(decompressor.isAllocated)
        compressor.release()
        decompressor.release()
        #expect(!compressor.isAllocated && !decompressor.isAllocated)
        // After a release the next message starts a fresh context on both sides.
        let again = try self.compress(Self.hello, with: compressor)
        #expect(again == hex("f2 48 cd c9 c9 07 00"))
        #expect(try self.inflate([again], with: decompressor) == Self.hello)
    }
}
