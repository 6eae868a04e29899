import Foundation
import Tether
import TetherCore

/// The payloads of a plan: each one different from every other of the plan, so that a payload names its send
/// exactly (`id(of:)`), whatever its size (a 1-byte message included), and anything else is a damaged message.
///
/// A payload of at least 8 bytes starts with `#ID;`, then a filler drawn from the plan's generator: text (UTF-8 with
/// 1- to 4-byte characters) or binary; alike from one message to the next (JSON quotes, which permessage-deflate
/// with context takeover compresses against the messages before) or not at all (random bytes).
struct UsePayloads: Sendable {
    private struct Key: Hashable {
        var text: Bool
        var bytes: Data
    }

    private var ids: [Key: Int] = [:]

    /// A payload for send `id` of `size` bytes (more when every payload of that size is taken).
    mutating func make(id: Int, size: Int, random: inout SplitMix64) -> WebSocketMessage {
        let text = random.chance(60)
        let alike = random.chance(50)
        var size = size
        while true {
            for _ in 0..<16 {
                var bytes = Self.bytes(id: id, size: size, text: text, alike: alike, random: &random)
                if text { bytes = Self.validUTF8(bytes) }
                let key = Key(text: text, bytes: Data(bytes))
                guard self.ids[key] == nil else { continue }  // a tiny payload drawn twice
                self.ids[key] = id
                return text ? .text(String(decoding: bytes, as: UTF8.self)) : .binary(key.bytes)
            }
            size += 1
        }
    }

    /// The send this payload is exactly, or nil for anything no send of the plan is.
    func id(of message: WebSocketMessage) -> Int? {
        switch message {
        case .text(let text): self.ids[Key(text: true, bytes: Data(text.utf8))]
        case .binary(let data): self.ids[Key(text: false, bytes: data)]
        }
    }

    private static let characters: [[UInt8]] =
        ["a", "b", "c", "x", "y", "z", "0", "7", " ", "{", "}", "\"", ":", "é", "✓", "🌍", "ß", "\n"].map {
            Array($0.utf8)
        }

    private static func bytes(id: Int, size: Int, text: Bool, alike: Bool, random: inout SplitMix64) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(size)
        let tag = Array("#\(id);".utf8)
        let tagged = size >= 8 && tag.count <= size  // a tiny payload is told apart by its random bytes alone
        if tagged { bytes.append(contentsOf: tag) }
        if alike && tagged {
            let symbol = random.pick(["TTHR", "ACME", "WAVE"])
            var index = random.below(1_000)
            while bytes.count < size {
                let quote = #"{"symbol":"\#(symbol)","price":\#(100 + index % 7).25,"size":\#(index * 10)},"#
                bytes.append(contentsOf: quote.utf8.prefix(size - bytes.count))
                index += 1
            }
        } else if text {
            while bytes.count < size {
                let character = Self.characters[random.below(Self.characters.count)]
                if bytes.count + character.count > size {
                    bytes.append(contentsOf: repeatElement(UInt8(ascii: "."), count: size - bytes.count))
                } else {
                    bytes.append(contentsOf: character)
                }
            }
        } else {
            while bytes.count < size {
                withUnsafeBytes(of: random.next()) { bytes.append(contentsOf: $0.prefix(size - bytes.count)) }
            }
        }
        return bytes
    }

    /// ASCII and whole characters only: a filler cut at `size` may have cut a character (the JSON quotes do not,
    /// the characters do not), so any byte that is not ASCII and not part of a whole character becomes `.`.
    private static func validUTF8(_ bytes: [UInt8]) -> [UInt8] {
        if String(validating: bytes, as: UTF8.self) != nil { return bytes }
        return bytes.map { $0 < 0x80 ? $0 : UInt8(ascii: ".") }
    }
}
