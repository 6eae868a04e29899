import Testing
@testable import TetherWire

@Suite struct WebSocketDecoderTests {
    // RFC 6455 §5.7 examples.

    @Test func singleFrameUnmaskedTextFromServerDecodesToHello() throws {
        var decoder = WebSocketDecoder(role: .client)
        decoder.append(hex("81 05 48 65 6c 6c 6f"))
        #expect(try decoder.next() == .text("Hello"))
        #expect(try decoder.next() == nil)
    }

    @Test func singleFrameMaskedTextFromClientDecodesToHello() throws {
        var decoder = WebSocketDecoder(role: .server)
        decoder.append(hex("81 85 37 fa 21 3d 7f 9f 4d 51 58"))
        #expect(try decoder.next() == .text("Hello"))
    }

    @Test func fragmentedUnmaskedTextAssemblesToHello() throws {
        var decoder = WebSocketDecoder(role: .client)
        decoder.append(hex("01 03 48 65 6c"))
        #expect(try decoder.next() == nil)
        decoder.append(hex("80 02 6c 6f"))
        #expect(try decoder.next() == .text("Hello"))
    }

    @Test func unmaskedPingAndMaskedPongCarryHello() throws {
        var client = WebSocketDecoder(role: .client)
        client.append(hex("89 05 48 65 6c 6c 6f"))
        #expect(try client.next() == .ping(Array("Hello".utf8)))
        var server = WebSocketDecoder(role: .server)
        server.append(hex("8a 85 37 fa 21 3d 7f 9f 4d 51 58"))
        #expect(try server.next() == .pong(Array("Hello".utf8)))
    }

    @Test func binaryWith256BytesUses16BitLength() throws {
        var decoder = WebSocketDecoder(role: .client)
        let payload = (0..<256).map { UInt8(truncatingIfNeeded: $0) }
        decoder.append(hex("82 7E 01 00") + payload)
        #expect(try decoder.next() == .binary(payload))
    }

    @Test func binaryWith64KiBUses64BitLength() throws {
        var decoder = WebSocketDecoder(role: .client)
        let payload = (0..<65536).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        decoder.append(hex("82 7F 00 00 00 00 00 01 00 00") + payload)
        #expect(try decoder.next() == .binary(payload))
    }
}

extension WebSocketDecoderTests {
    @Test func messagesBeforeAViolationAreDeliveredThenTheErrorRepeats() throws {
        var decoder = WebSocketDecoder(role: .client)
        decoder.append(hex("81 02 68 69") + hex("82 01 07") + hex("83 00") + hex("81 01 41"))
        #expect(try decoder.next() == .text("hi"))
        #expect(try decoder.next() == .binary([7]))
        #expect(throws: ProtocolError(.unknownOpcode(3))) { try decoder.next() }
        decoder.append(hex("81 01 42"))
        #expect(throws: ProtocolError(.unknownOpcode(3))) { try decoder.next() }
    }

    @Test func closeFrameDecodesCodeAndReasonAndLaterBytesAreDiscarded() throws {
        var decoder = WebSocketDecoder(role: .client)
        decoder.append(hex("88 05 03 e8 62 79 65") + hex("81 01 41"))
        #expect(try decoder.next() == .close(code: 1000, reason: "bye"))
        #expect(decoder.isClosed)
        #expect(try decoder.next() == nil)
    }

    @Test func emptyCloseFrameHasNoCode() throws {
        var decoder = WebSocketDecoder(role: .client)
        decoder.append(hex("88 00"))
        #expect(try decoder.next() == .close(code: nil, reason: ""))
    }

    @Test func pingInsideFragmentedTextIsDeliveredFirst() throws {
        var decoder = WebSocketDecoder(role: .client)
        decoder.append(hex("01 03 48 65 6c") + hex("89 01 01") + hex("80 02 6c 6f"))
        #expect(try decoder.next() == .ping([1]))
        #expect(try decoder.next() == .text("Hello"))
    }

    @Test func invalidUTF8InFirstFragmentFailsBeforeTheMessageEnds() {
        var decoder = WebSocketDecoder(role: .client)
        decoder.append(hex("01 02 41 ff"))
        let failure = #expect(throws: ProtocolError.self) { try decoder.next() }
        #expect(failure?.closeCode == 1007)
    }

    @Test func messageLimitAcrossFragmentsIs1009() {
        var decoder = WebSocketDecoder(role: .client, maximumMessageSize: 4)
        decoder.append(hex("02 03 01 02 03") + hex("80 02 04 05"))
        let failure = #expect(throws: ProtocolError.self) { try decoder.next() }
        #expect(failure == ProtocolError(.messageTooBig(limit: 4)))
        #expect(failure?.closeCode == 1009)
    }

    @Test func frameLimitIs1009() {
        var decoder = WebSocketDecoder(role: .client, maximumFrameSize: 200)
        decoder.append([0x82, 0x7E, 0x00, 0xC9])
        #expect(throws: ProtocolError(.frameTooBig(length: 201, limit: 200))) { try decoder.next() }
    }

    @Test func nextMessageLendsPayloadWithoutCopying() throws {
        var decoder = WebSocketDecoder(role: .server)
        decoder.append(hex("82 85 37 fa 21 3d 7f 9f 4d 51 58"))
        let lent = try decoder.nextMessage { message in (message.opcode, Array(message.payload)) }
        #expect(lent?.0 == .binary)
        #expect(lent?.1 == Array("Hello".utf8))
        #expect(try decoder.nextMessage { _ in true } == nil)
    }

    @Test func borrowedCloseExposesCodeAndReason() throws {
        var decoder = WebSocketDecoder(role: .client)
        decoder.append(hex("88 04 0f a0 6f 6b"))
        let close = try decoder.nextMessage { ($0.closeCode, Array($0.closeReason)) }
        #expect(close?.0 == 4000)
        #expect(close?.1 == Array("ok".utf8))
    }

    @Test func everySplitPositionOfAMessageStreamGivesTheSameMessages() throws {
        let stream = FrameParserTests.serverStream
        let expected: [WireMessage] = [
            .text("Hello"), .ping([]), .binary([UInt8](repeating: 0x5A, count: 128)), .pong([0x21]), .text("Hello"),
            .close(code: 1000, reason: ""),
        ]
        for split in 0...stream.count {
            var decoder = WebSocketDecoder(role: .client)
            var messages: [WireMessage] = []
            decoder.append(stream[..<split])
            while let message = try decoder.next() { messages.append(message) }
            decoder.append(stream[split...])
            while let message = try decoder.next() { messages.append(message) }
            #expect(messages == expected, "split at \(split)")
        }
    }
}

extension WebSocketDecoderTests {
    @Test func allowedReservedBitsOfTheFirstFrameArePassedThroughPerMessage() throws {
        var decoder = WebSocketDecoder(role: .client, reservedBitsAllowed: 0b100)
        decoder.append(hex("c2 01 07") + hex("42 01 01") + hex("80 01 02") + hex("82 01 03"))
        #expect(try decoder.nextMessage { ($0.reservedBits, Array($0.payload)) }.map { [$0.0] + $0.1 } == [4, 7])
        #expect(try decoder.nextMessage { ($0.reservedBits, Array($0.payload)) }.map { [$0.0] + $0.1 } == [4, 1, 2])
        #expect(try decoder.nextMessage { ($0.reservedBits, Array($0.payload)) }.map { [$0.0] + $0.1 } == [0, 3])
    }
}

extension WebSocketDecoderTests {
    @Test func oversizedMessageIsRejectedFromItsHeaderWithoutWaitingForThePayload() {
        var decoder = WebSocketDecoder(role: .server, maximumMessageSize: 1 << 20)
        decoder.append([0x82, 0xFF, 0, 0, 0, 0, 0, 0x20, 0, 0, 1, 2, 3, 4])  // 2 MiB announced, no payload sent
        let failure = #expect(throws: ProtocolError.self) { try decoder.next() }
        #expect(failure == ProtocolError(.messageTooBig(limit: 1 << 20)))
        #expect(failure?.closeCode == 1009)
    }

    /// Decodes `stream` fed in pieces of the given sizes (cycled), returning the messages and the error; binary
    /// messages of `storageFrom` bytes or more are received into storage of their own.
    func decode(
        _ stream: [UInt8], role: Role, pieces: [Int], storageFrom threshold: Int = 16 << 10
    ) -> ([WireMessage], ProtocolError?) {
        var decoder = WebSocketDecoder(
            role: role, maximumFrameSize: 300, maximumMessageSize: 500, reservedBitsAllowed: 0,
            dedicatedPayloadThreshold: threshold)
        var messages: [WireMessage] = []
        var start = 0
        var piece = 0
        while start < stream.count {
            let end = min(stream.count, start + pieces[piece % pieces.count])
            piece += 1
            decoder.append(stream[start..<end])
            do {
                while let message = try decoder.next() { messages.append(message) }
            } catch {
                return (messages, error)
            }
            start = end
        }
        return (messages, nil)
    }

    @Test func randomStreamsGiveTheSameMessagesAndErrorWhateverTheReadSizes() {
        // Mostly well-formed frames with random corruption, so that both messages and every kind of error occur.
        var random = SeededRandom(seed: 99)
        var errors = 0
        for round in 0..<400 {
            let role: Role = round % 2 == 0 ? .client : .server
            var encoder = WebSocketEncoder(
                role: role == .client ? .server : .client, fragmentSize: Int.random(in: 1...200, using: &random),
                random: SeededRandom(seed: UInt64(round)))
            var stream: [UInt8] = []
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                let length = Int.random(in: 0...400, using: &random)
                if Bool.random(using: &random) {
                    encoder.text(String(repeating: "é", count: length / 2), into: &stream)
                } else {
                    encoder.binary([UInt8](repeating: 1, count: length), into: &stream)
                }
            }
            for _ in 0..<Int.random(in: 0...2, using: &random) where !stream.isEmpty {
                stream[Int.random(in: 0..<stream.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
            }
            let atOnce = self.decode(stream, role: role, pieces: [stream.count])
            let pieces = (0..<5).map { _ in Int.random(in: 1...40, using: &random) }
            let inPieces = self.decode(stream, role: role, pieces: pieces)
            #expect(atOnce.0 == inPieces.0 && atOnce.1 == inPieces.1, "round \(round)")
            let inStorage = self.decode(stream, role: role, pieces: pieces, storageFrom: 16)
            #expect(atOnce.0 == inStorage.0 && atOnce.1 == inStorage.1, "round \(round), in storage")
            if let error = atOnce.1 {
                errors += 1
                #expect([1002, 1007, 1009].contains(error.closeCode))
            }
        }
        #expect(errors > 50)
    }
}

// Autobahn 6.4.3 and 6.4.4: invalid UTF-8 early in a text frame whose tail has not arrived yet.
extension WebSocketDecoderTests {
    /// A 21-byte text frame: "κόσμε", then an invalid byte (F4 90 80 80 is above U+10FFFF), then more text.
    private static let invalidTail: [UInt8] = hex("ce ba e1 bd b9 cf 83 ce bc ce b5 f4 90 80 80 65 64 69 74 65 64")

    @Test func invalidUTF8FailsBeforeTheRestOfAnUnfragmentedTextFrameArrives() throws {
        var decoder = WebSocketDecoder(role: .client)
        let payload = Self.invalidTail
        decoder.append(hex("81") + [UInt8(payload.count)] + payload[..<11])
        #expect(try decoder.next() == nil)  // valid so far
        decoder.append(payload[11..<12])  // F4 starts a sequence; 90 will put it out of range
        #expect(try decoder.next() == nil)
        decoder.append(payload[12..<13])
        #expect(throws: ProtocolError(.invalidUTF8)) { try decoder.next() }
    }

    @Test func invalidUTF8FailsEarlyInAMaskedTextFrameFromAClient() throws {
        var decoder = WebSocketDecoder(role: .server)
        let key = MaskingKey(0x37, 0xfa, 0x21, 0x3d)
        var payload = Self.invalidTail
        payload.withUnsafeMutableBytes { key.apply(to: $0) }
        let header = hex("81") + [0x80 | UInt8(payload.count)] + key.bytes
        // Bytes arrive one at a time: each is unmasked once, at its own key offset.
        decoder.append(header)
        for byte in payload[..<12] {
            decoder.append([byte])
            #expect(try decoder.next() == nil)
        }
        decoder.append(payload[12..<13])
        #expect(throws: ProtocolError(.invalidUTF8)) { try decoder.next() }
    }

    @Test func invalidUTF8FailsEarlyInAContinuationFrameOfText() throws {
        var decoder = WebSocketDecoder(role: .client)
        decoder.append(hex("01 02 68 69") + hex("80 05 41 42 c0"))
        #expect(throws: ProtocolError(.invalidUTF8)) { try decoder.next() }
    }

    @Test func validTextArrivingInPiecesIsCheckedOnceAndDeliveredWhole() throws {
        // Byte by byte, read every `step` bytes, so code points split across reads, masked and unmasked.
        let text = "héllo wörld €𝄞"
        let payload = Array(text.utf8)
        for role in [Role.client, .server] {
            var frame = hex("81") + [(role == .server ? 0x80 : 0) | UInt8(payload.count)]
            var body = payload
            if role == .server {
                let key = MaskingKey(0x01, 0x02, 0x03, 0x04)
                frame += key.bytes
                body.withUnsafeMutableBytes { key.apply(to: $0) }
            }
            frame += body
            for step in 1..<frame.count {
                var decoder = WebSocketDecoder(role: role)
                for (index, byte) in frame.enumerated() {
                    decoder.append([byte])
                    if index == frame.count - 1 {
                        #expect(try decoder.next() == .text(text), "role \(role) step \(step)")
                    } else if index % step == 0 {
                        #expect(try decoder.next() == nil)
                    }
                }
            }
        }
    }

    @Test func binaryFramesAreNotCheckedAsText() throws {
        var decoder = WebSocketDecoder(role: .client)
        decoder.append(hex("82 04 ff fe"))
        #expect(try decoder.next() == nil)
        decoder.append(hex("fd fc"))
        #expect(try decoder.next() == .binary([0xff, 0xfe, 0xfd, 0xfc]))
    }
}
