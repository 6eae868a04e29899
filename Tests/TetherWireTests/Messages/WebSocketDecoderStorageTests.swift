import Testing
@testable import TetherWire

/// A large binary message in one frame is received into storage of its own (`BorrowedMessage.storage`), which its
/// receiver may keep instead of copying the payload: the bytes are the message's, whatever the read sizes, masked or
/// not, and stay the message's after the decoder goes on.
@Suite struct WebSocketDecoderStorageTests {
    /// `count` bytes that differ from one offset to the next.
    static func payload(_ count: Int, seed: UInt8 = 0) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) }
    }

    /// The frames of `messages`, sent by the other side of `role`.
    static func stream(for role: Role, _ messages: [WireMessage]) -> [UInt8] {
        var encoder = WebSocketEncoder(role: role == .client ? .server : .client, random: SeededRandom(seed: 5))
        var stream: [UInt8] = []
        for message in messages {
            switch message {
            case .text(let text): encoder.text(text, into: &stream)
            case .binary(let bytes): encoder.binary(bytes, into: &stream)
            default: Issue.record("only data messages here")
            }
        }
        return stream
    }

    /// What the decoder lends for each message: a copy of the payload and the storage it came in, if any.
    static func lend(
        _ stream: [UInt8], role: Role, pieces: Int, threshold: Int = 16 << 10
    ) throws -> [(payload: [UInt8], storage: PayloadStorage?, inStorage: Bool)] {
        var decoder = WebSocketDecoder(
            role: role, maximumFrameSize: 16 << 20, maximumMessageSize: 16 << 20, reservedBitsAllowed: 0,
            dedicatedPayloadThreshold: threshold)
        var lent: [(payload: [UInt8], storage: PayloadStorage?, inStorage: Bool)] = []
        var start = 0
        while start < stream.count {
            let end = min(stream.count, start + pieces)
            decoder.append(stream[start..<end])
            start = end
            while let message = try decoder.nextMessage({ message in
                let start = message.payload.baseAddress
                return (Array(message.payload), message.storage,
                        message.storage.map { UnsafeRawPointer($0.bytes.baseAddress) == start } ?? false)
            }) {
                lent.append(message)
            }
        }
        return lent
    }

    @Test func aLargeBinaryMessageArrivingInPiecesIsLentInStorageOfItsOwn() throws {
        let large = Self.payload(1 << 20)
        let stream = Self.stream(for: .client, [.binary(large), .text("after"), .binary(Self.payload(70_000, seed: 9))])
        let lent = try Self.lend(stream, role: .client, pieces: 64 << 10)
        #expect(lent.count == 3)
        #expect(lent[0].payload == large)
        #expect(lent[0].storage != nil && lent[0].inStorage, "the payload lent is the storage's")
        #expect(lent[0].storage.map { Array($0.bytes) } == large, "kept after the decoder went on, unchanged")
        #expect(lent[1].payload == Array("after".utf8) && lent[1].storage == nil)
        #expect(lent[2].payload == Self.payload(70_000, seed: 9) && lent[2].inStorage)
    }

    @Test func aMaskedLargeFrameIsUnmaskedInItsOwnStorageWhateverTheReadSizes() throws {
        let large = Self.payload(100_003, seed: 3)
        let stream = Self.stream(for: .server, [.binary(large), .binary(large)])
        for pieces in [1_000, 4_093, 65_536, stream.count] {
            let lent = try Self.lend(stream, role: .server, pieces: pieces)
            #expect(lent.map(\.payload) == [large, large], "pieces of \(pieces)")
            // Whole with its header in one read: copied out of the buffer once, as before.
            let inStorage = pieces < large.count
            #expect(lent.map(\.inStorage) == [inStorage, inStorage], "pieces of \(pieces)")
            #expect(lent.map { $0.storage.map { Array($0.bytes) } } == (inStorage ? [large, large] : [nil, nil]))
        }
    }

    /// Only a binary message in one frame saves a copy in storage of its own: text is copied into a string, a
    /// fragment into the assembled message; and a small one stays in the buffer.
    @Test func textFragmentsAndSmallMessagesStayInTheBuffer() throws {
        let large = Self.payload(40_000)
        var stream = Self.stream(for: .client, [.text(String(repeating: "a", count: 40_000)), .binary(Array(large[..<100]))])
        var fragmenting = WebSocketEncoder(role: .server, fragmentSize: 30_000, random: SeededRandom(seed: 1))
        fragmenting.binary(large, into: &stream)
        let lent = try Self.lend(stream, role: .client, pieces: 1_000)
        #expect(lent.map { $0.payload.count } == [40_000, 100, 40_000])
        #expect(lent.allSatisfy { $0.storage == nil })
        #expect(lent[2].payload == large)
    }

    /// The bytes received into a large frame's own storage count as buffered until the frame is whole, as they did
    /// in the buffer.
    @Test func bytesReceivedIntoStorageCountAsBuffered() throws {
        let stream = Self.stream(for: .client, [.binary(Self.payload(50_000))])
        var decoder = WebSocketDecoder(role: .client)
        decoder.append(stream[..<10_004])  // a 4-byte header and 10,000 bytes of payload
        #expect(try decoder.nextMessage { _ in true } == nil)
        #expect(decoder.bufferedByteCount == 10_004)
        decoder.append(stream[10_004..<30_004])
        #expect(decoder.bufferedByteCount == 30_004)
        decoder.append(stream[30_004...])
        #expect(try decoder.nextMessage { $0.storage != nil } == true)
        #expect(try decoder.nextMessage { _ in true } == nil)
        #expect(decoder.bufferedByteCount == 0)
    }
}
