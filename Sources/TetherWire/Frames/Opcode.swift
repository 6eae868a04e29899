/// A frame opcode (RFC 6455 §5.2). A struct with static members so that values this version does
/// not name can still be carried and reported.
public struct Opcode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The 4-bit opcode value (0–15).
    public var rawValue: UInt8

    /// Keeps the low 4 bits, the size of the opcode field.
    public init(rawValue: UInt8) {
        self.rawValue = rawValue & 0x0F
    }

    /// 0x0: a later fragment of a text or binary message.
    public static let continuation = Opcode(rawValue: 0x0)
    /// 0x1: a text message (UTF-8), or its first fragment.
    public static let text = Opcode(rawValue: 0x1)
    /// 0x2: a binary message, or its first fragment.
    public static let binary = Opcode(rawValue: 0x2)
    /// 0x8: close, with an optional status code and UTF-8 reason.
    public static let close = Opcode(rawValue: 0x8)
    /// 0x9: ping; the peer answers with a pong carrying the same payload.
    public static let ping = Opcode(rawValue: 0x9)
    /// 0xA: pong.
    public static let pong = Opcode(rawValue: 0xA)

    /// Control frames (close, ping, pong and the reserved 0xB–0xF) have the high opcode bit set.
    public var isControl: Bool { self.rawValue & 0x8 != 0 }

    /// Whether RFC 6455 defines this opcode (the others are reserved and rejected on the wire).
    public var isKnown: Bool {
        switch self.rawValue {
        case 0x0, 0x1, 0x2, 0x8, 0x9, 0xA: true
        default: false
        }
    }

    public var description: String {
        switch self.rawValue {
        case 0x0: "continuation"
        case 0x1: "text"
        case 0x2: "binary"
        case 0x8: "close"
        case 0x9: "ping"
        case 0xA: "pong"
        default: "opcode(\(self.rawValue))"
        }
    }
}
