import Testing
@testable import TetherWire

@Suite struct RoundTripTests {
    /// A random message: text (with multi-byte characters), binary, or a ping.
    static func randomMessage(using random: inout SeededRandom) -> WireMessage {
        let size = [0, 1, 5, 125, 126, 127, 1000, 65535, 65536, 70000].randomElement(using: &random)!
            + Int.random(in: 0...3, using: &random)
        switch Int.random(in: 0..<5, using: &random) {
        case 0, 1:
            let alphabet: [Character] = ["a", "Z", " ", "é", "€", "中", "🌍"]
            return .text(String((0..<size / 2).map { _ in alphabet.randomElement(using: &random)! }))
        case 2, 3:
            return .binary((0..<size).map { _ in UInt8.random(in: 0...255, using: &random) })
        default:
            return .ping((0..<min(size, 125)).map { _ in UInt8.random(in: 0...255, using: &random) })
        }
    }

    static func encode(_ message: WireMessage, with encoder: inout WebSocketEncoder<SeededRandom>,
                       into buffer: inout [UInt8]) throws {
        switch message {
        case .text(let text): encoder.text(text, into: &buffer)
        case .binary(let bytes): encoder.binary(bytes, into: &buffer)
        case .ping(let bytes): try encoder.ping(bytes, into: &buffer)
        case .pong(let bytes): try encoder.pong(bytes, into: &buffer)
        case .close(let code, let reason): try encoder.close(code: code, reason: reason, into: &buffer)
        }
    }

    /// Sends `messages` from `from` to a decoder of the other role in random chunk sizes.
    static func transfer(_ messages: [WireMessage], from role: Role, seed: UInt64) throws -> [WireMessage] {
        var random = SeededRandom(seed: seed)
        var received: [WireMessage] = []
        var decoder = WebSocketDecoder(role: role == .client ? .server : .client)
        for message in messages {
            var encoder = WebSocketEncoder(
                role: role, fragmentSize: [1, 3, 100, 4096, .max].randomElement(using: &random)!, random: random)
            var wire: [UInt8] = []
            try Self.encode(message, with: &encoder, into: &wire)
            random = encoder.random
            var start = 0
            while start < wire.count {
                let end = min(wire.count, start + Int.random(in: 1...9000, using: &random))
                decoder.append(wire[start..<end])
                while let next = try decoder.next() { received.append(next) }
                start = end
            }
        }
        return received
    }

    @Test(arguments: [1, 2, 3, 4] as [UInt64])
    func randomMessagesSurviveClientToServerAndBack(seed: UInt64) throws {
        var random = SeededRandom(seed: seed)
        let messages = (0..<30).map { _ in Self.randomMessage(using: &random) }
        let atServer = try Self.transfer(messages, from: .client, seed: seed &+ 100)
        #expect(atServer == messages)
        let atClient = try Self.transfer(atServer, from: .server, seed: seed &+ 200)
        #expect(atClient == messages)
    }

    @Test func closeWithReasonRoundTrips() throws {
        let messages: [WireMessage] = [.text("last"), .close(code: 4001, reason: "done ✓")]
        #expect(try Self.transfer(messages, from: .client, seed: 9) == messages)
    }
}
