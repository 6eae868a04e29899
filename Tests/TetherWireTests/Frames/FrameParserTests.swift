import Testing
@testable import TetherWire

@Suite struct FrameParserTests {
    /// Parses `bytes` and returns the error thrown, or nil if none.
    func error(_ bytes: [UInt8], role: Role = .client, maximumFrameSize: Int = 16 << 20,
               reservedBitsAllowed: UInt8 = 0) -> ProtocolError? {
        var parser = FrameParser(role: role, maximumFrameSize: maximumFrameSize,
                                 reservedBitsAllowed: reservedBitsAllowed)
        parser.append(bytes)
        do {
            while try parser.next() != nil {}
            return nil
        } catch {
            return error
        }
    }

    @Test func reservedBitsWithoutExtensionAre1002() {
        for bits: UInt8 in [0x40, 0x20, 0x10] {
            let failure = self.error([0x81 | bits, 0x00])
            #expect(failure?.kind == .reservedBitsSet(bits >> 4))
            #expect(failure?.closeCode == 1002)
        }
    }

    @Test func reservedBitAllowedByExtensionPasses() throws {
        var parser = FrameParser(role: .client, reservedBitsAllowed: 0b100)
        parser.append([0xC1, 0x01, 0x41])
        let frame = try #require(try parser.next())
        #expect(frame.reservedBits == 0b100)
        #expect(self.error([0xA1, 0x00], reservedBitsAllowed: 0b100)?.kind == .reservedBitsSet(0b010))
    }

    @Test func everyReservedOpcodeIs1002() {
        for opcode: UInt8 in [3, 4, 5, 6, 7, 0xB, 0xC, 0xD, 0xE, 0xF] {
            let failure = self.error([0x80 | opcode, 0x00])
            #expect(failure == ProtocolError(.unknownOpcode(opcode)))
            #expect(failure?.closeCode == 1002)
        }
    }

    @Test func fragmentedControlFrameIs1002() {
        for opcode: UInt8 in [0x8, 0x9, 0xA] {
            #expect(self.error([opcode, 0x00]) == ProtocolError(.fragmentedControlFrame))
        }
    }

    @Test func controlFrameOver125BytesIs1002() {
        #expect(self.error([0x89, 0x7E, 0x00, 0x7E] + [UInt8](repeating: 0, count: 126))
            == ProtocolError(.controlFrameTooLong(126)))
        #expect(self.error([0x8A, 0x7F]) == ProtocolError(.controlFrameTooLong(127)))
        #expect(self.error([0x89, 0x7D] + [UInt8](repeating: 0, count: 125)) == nil)
    }

    @Test func sixtyFourBitLengthWithTopBitSetIs1002() {
        let failure = self.error([0x82, 0x7F, 0x80, 0, 0, 0, 0, 0, 0, 0])
        #expect(failure == ProtocolError(.lengthTopBitSet))
        #expect(failure?.closeCode == 1002)
    }

    @Test func nonMinimalLengthsAre1002() {
        #expect(self.error([0x82, 0x7E, 0x00, 0x7D]) == ProtocolError(.nonMinimalLength))
        #expect(self.error([0x82, 0x7F, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF]) == ProtocolError(.nonMinimalLength))
        #expect(self.error([0x82, 0x7E, 0x00, 0x7E] + [UInt8](repeating: 0, count: 126)) == nil)
    }

    @Test func clientRejectsMaskedFrameAndServerRejectsUnmaskedFrame() {
        #expect(self.error(hex("81 85 37 fa 21 3d 7f 9f 4d 51 58"), role: .client)
            == ProtocolError(.maskedFrameFromServer))
        #expect(self.error(hex("81 05 48 65 6c 6c 6f"), role: .server) == ProtocolError(.unmaskedFrameFromClient))
        #expect(self.error(hex("81 05 48 65 6c 6c 6f"), role: .server)?.closeCode == 1002)
    }

    @Test func frameOverMaximumIs1009BeforeItsPayloadArrives() {
        var parser = FrameParser(role: .client, maximumFrameSize: 1000)
        parser.append([0x82, 0x7E, 0x03, 0xE9])  // 1001 bytes announced, none sent
        #expect(throws: ProtocolError(.frameTooBig(length: 1001, limit: 1000))) { try parser.next() }
        #expect(self.error([0x82, 0x7E, 0x03, 0xE9], maximumFrameSize: 1000)?.closeCode == 1009)
        #expect(self.error([0x82, 0x7E, 0x03, 0xE8] + [UInt8](repeating: 1, count: 1000), maximumFrameSize: 1000)
            == nil)
    }

    @Test func headerViolationIsReportedFromTheFirstByte() {
        var parser = FrameParser(role: .client)
        parser.append([0x83])
        #expect(throws: ProtocolError(.unknownOpcode(3))) { try parser.next() }
    }

    @Test func peekHeaderReturnsHeaderBeforePayloadArrives() throws {
        var parser = FrameParser(role: .server)
        parser.append(hex("82 85 01 02 03 04 aa"))
        let header = try #require(try parser.peekHeader())
        #expect(header
            == FrameHeader(fin: true, opcode: .binary, maskingKey: MaskingKey(1, 2, 3, 4), payloadLength: 5))
        #expect(try parser.nextFrame() == nil)
    }

    /// A stream of several frames of different shapes: unmasked text, ping, 16-bit length, fragments, close.
    static let serverStream: [UInt8] =
        hex("81 05 48 65 6c 6c 6f") + hex("89 00") + [0x82, 0x7E, 0x00, 0x80] + [UInt8](repeating: 0x5A, count: 128)
        + hex("01 03 48 65 6c") + hex("8a 01 21") + hex("80 02 6c 6f") + hex("88 02 03 e8")

    static let expectedFrames: [Frame] = [
        Frame(fin: true, opcode: .text, payload: Array("Hello".utf8)),
        Frame(fin: true, opcode: .ping, payload: []),
        Frame(fin: true, opcode: .binary, payload: [UInt8](repeating: 0x5A, count: 128)),
        Frame(fin: false, opcode: .text, payload: Array("Hel".utf8)),
        Frame(fin: true, opcode: .pong, payload: [0x21]),
        Frame(fin: true, opcode: .continuation, payload: Array("lo".utf8)),
        Frame(fin: true, opcode: .close, payload: [0x03, 0xE8]),
    ]

    @Test func everySplitPositionOfAMultiFrameStreamGivesTheSameFrames() throws {
        let stream = Self.serverStream
        for split in 0...stream.count {
            var parser = FrameParser(role: .client)
            var frames: [Frame] = []
            parser.append(stream[..<split])
            while let frame = try parser.next() { frames.append(frame) }
            parser.append(stream[split...])
            while let frame = try parser.next() { frames.append(frame) }
            #expect(frames == Self.expectedFrames, "split at \(split)")
        }
    }

    @Test func everyPairOfSplitPositionsOfAMaskedStreamGivesTheSameFrames() throws {
        // Three pieces of a masked client stream: resumes inside headers, masking keys and payloads.
        var encoder = WebSocketEncoder(role: .client, fragmentSize: 3, random: SeededRandom(seed: 7))
        var stream: [UInt8] = []
        encoder.text("Hello", into: &stream)
        try encoder.ping([1, 2], into: &stream)
        var wideEncoder = WebSocketEncoder(role: .client, fragmentSize: 100, random: SeededRandom(seed: 8))
        wideEncoder.binary([UInt8](repeating: 9, count: 130), into: &stream)
        var reference = FrameParser(role: .server)
        reference.append(stream)
        var expected: [Frame] = []
        while let frame = try reference.next() { expected.append(frame) }
        #expect(expected.count == 5)
        for first in 0...stream.count {
            for second in first...stream.count {
                var parser = FrameParser(role: .server)
                var frames: [Frame] = []
                for piece in [stream[..<first], stream[first..<second], stream[second...]] {
                    parser.append(piece)
                    while let frame = try parser.next() { frames.append(frame) }
                }
                if frames != expected {
                    Issue.record("splits at \(first), \(second)")
                    return
                }
            }
        }
    }

    @Test func oneByteAtATimeGivesTheSameFramesThroughTheRawPointerAppend() throws {
        var parser = FrameParser(role: .client)
        var frames: [Frame] = []
        for byte in Self.serverStream {
            [byte].withUnsafeBytes { parser.append($0) }
            while let frame = try parser.next() { frames.append(frame) }
        }
        #expect(frames == Self.expectedFrames)
        #expect(parser.bufferedByteCount == 0)
    }

    @Test func lentPayloadIsUnmaskedInPlace() throws {
        var parser = FrameParser(role: .server)
        parser.append(hex("82 85 37 fa 21 3d 7f 9f 4d 51 58 81"))
        let frame = try #require(try parser.nextFrame())
        #expect(frame.header.payloadLength == 5)
        #expect(parser.withPayload(of: frame) { Array($0) } == Array("Hello".utf8))
        #expect(try parser.nextFrame() == nil)
        #expect(parser.bufferedByteCount == 1)
    }
}
