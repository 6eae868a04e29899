import Testing
@testable import TetherWire

@Suite struct WebSocketEncoderTests {
    @Test func serverTextHelloIsRFCUnmaskedFrame() {
        var encoder = WebSocketEncoder(role: .server)
        var buffer: [UInt8] = []
        encoder.text("Hello", into: &buffer)
        #expect(buffer == hex("81 05 48 65 6c 6c 6f"))
    }

    @Test func clientTextHelloWithRFCKeyIsRFCMaskedFrame() {
        // FixedRandom's low 32 bits become the key 37 fa 21 3d.
        var encoder = WebSocketEncoder(role: .client, random: FixedRandom(value: 0x37FA_213D))
        var buffer: [UInt8] = []
        encoder.text("Hello", into: &buffer)
        #expect(buffer == hex("81 85 37 fa 21 3d 7f 9f 4d 51 58"))
    }

    @Test func serverFragmentsHelloAtThreeBytesLikeRFC() {
        var encoder = WebSocketEncoder(role: .server, fragmentSize: 3)
        var buffer: [UInt8] = []
        encoder.text("Hello", into: &buffer)
        #expect(buffer == hex("01 03 48 65 6c 80 02 6c 6f"))
    }
}

extension WebSocketEncoderTests {
    @Test func controlPayloadOver125BytesIsAUsageError() {
        var encoder = WebSocketEncoder(role: .server)
        var buffer: [UInt8] = []
        #expect(throws: WireUsageError.controlPayloadTooLong(126)) {
            try encoder.ping([UInt8](repeating: 0, count: 126), into: &buffer)
        }
        #expect(throws: WireUsageError.controlPayloadTooLong(126)) {
            try encoder.pong([UInt8](repeating: 0, count: 126), into: &buffer)
        }
        #expect(throws: WireUsageError.controlPayloadTooLong(126)) {
            try encoder.close(code: 1000, reason: String(repeating: "x", count: 124), into: &buffer)
        }
        #expect(buffer.isEmpty)
    }

    @Test func closeCodesNotValidOnTheWireAreUsageErrors() {
        var encoder = WebSocketEncoder(role: .server)
        var buffer: [UInt8] = []
        for code: UInt16 in [999, 1004, 1005, 1006, 1015, 2000, 5000] {
            #expect(throws: WireUsageError.invalidCloseCode(code)) {
                try encoder.close(code: code, reason: "", into: &buffer)
            }
        }
        #expect(throws: WireUsageError.closeReasonWithoutCode) {
            try encoder.close(code: nil, reason: "x", into: &buffer)
        }
        #expect(buffer.isEmpty)
    }

    @Test func closePingAndPongBuildExpectedFrames() throws {
        var encoder = WebSocketEncoder(role: .server)
        var buffer: [UInt8] = []
        try encoder.close(code: 1001, reason: "bye", into: &buffer)
        #expect(buffer == hex("88 05 03 e9 62 79 65"))
        buffer.removeAll()
        try encoder.close(code: nil, reason: "", into: &buffer)
        #expect(buffer == hex("88 00"))
        buffer.removeAll()
        try encoder.ping(Array("Hello".utf8), into: &buffer)
        try encoder.pong([], into: &buffer)
        #expect(buffer == hex("89 05 48 65 6c 6c 6f 8a 00"))
        buffer.removeAll()
        try encoder.close(code: 1000, reason: String(repeating: "x", count: 123), into: &buffer)
        #expect(buffer.count == 2 + 125)
    }

    @Test func clientFramesUseAFreshKeyFromTheRandomSourceForEachFrame() throws {
        var encoder = WebSocketEncoder(role: .client, fragmentSize: 2, random: SeededRandom(seed: 11))
        var buffer: [UInt8] = []
        encoder.binary([1, 2, 3, 4], into: &buffer)
        #expect(buffer.count == 2 * (2 + 4 + 2))
        let firstKey = Array(buffer[2..<6])
        let secondKey = Array(buffer[10..<14])
        #expect(firstKey != secondKey)
        var decoder = WebSocketDecoder(role: .server)
        decoder.append(buffer)
        #expect(try decoder.next() == .binary([1, 2, 3, 4]))
    }

    @Test func emptyMessageIsOneEmptyFrame() {
        var encoder = WebSocketEncoder(role: .server, fragmentSize: 4)
        var buffer: [UInt8] = []
        encoder.binary([], into: &buffer)
        encoder.text("", into: &buffer)
        #expect(buffer == hex("82 00 81 00"))
    }

    @Test func lengthEncodingSwitchesAt126And65536() {
        var encoder = WebSocketEncoder(role: .server)
        for (length, header) in [(125, hex("82 7d")), (126, hex("82 7e 00 7e")), (65535, hex("82 7e ff ff")),
                                 (65536, hex("82 7f 00 00 00 00 00 01 00 00"))] {
            var buffer: [UInt8] = []
            encoder.binary([UInt8](repeating: 0, count: length), into: &buffer)
            #expect(Array(buffer.prefix(header.count)) == header)
            #expect(buffer.count == header.count + length)
        }
    }

    @Test func rawPointerPayloadEncodesLikeTheCollection() {
        var first = WebSocketEncoder(role: .client, fragmentSize: 7, random: SeededRandom(seed: 5))
        var second = WebSocketEncoder(role: .client, fragmentSize: 7, random: SeededRandom(seed: 5))
        let payload = (0..<40).map { UInt8($0) }
        var fromCollection: [UInt8] = []
        var fromPointer: [UInt8] = []
        first.encode(.binary, payload: payload, into: &fromCollection)
        payload.withUnsafeBytes { second.encode(.binary, payload: $0, into: &fromPointer) }
        #expect(fromCollection == fromPointer)
    }

    /// A payload in contiguous memory is masked while it is copied into the frame, any other collection copied and
    /// then masked: the frames are the same bytes, after a header and a frame already in the buffer too (so that the
    /// copy starts at every alignment), and the server reads the message back.
    @Test func maskingWhileCopyingEncodesLikeCopyingThenMasking() throws {
        let payload = (0..<1_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        for lead in 0..<9 {
            var contiguous = WebSocketEncoder(role: .client, fragmentSize: 300, random: SeededRandom(seed: 9))
            var elementwise = WebSocketEncoder(role: .client, fragmentSize: 300, random: SeededRandom(seed: 9))
            var fromArray = [UInt8](repeating: 0xAB, count: lead)
            var fromLazy = fromArray
            contiguous.encode(.binary, payload: payload, into: &fromArray)
            let lazy = payload.lazy.map { $0 }
            #expect(lazy.withContiguousStorageIfAvailable { _ in () } == nil)  // the other path is taken
            elementwise.encode(.binary, payload: lazy, into: &fromLazy)
            #expect(fromArray == fromLazy)
            var decoder = WebSocketDecoder(role: .server)
            decoder.append(fromArray[lead...])
            #expect(try decoder.next() == .binary(payload))
        }
    }
}
