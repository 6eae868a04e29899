/// The decoded header of one frame (RFC 6455 §5.2).
public struct FrameHeader: Hashable, Sendable {
    /// FIN: this is the final fragment of a message.
    public var fin: Bool
    /// RSV1, RSV2, RSV3 as the low three bits (`0b100` is RSV1).
    public var reservedBits: UInt8
    public var opcode: Opcode
    /// The masking key, if the frame is masked.
    public var maskingKey: MaskingKey?
    /// The payload length in bytes.
    public var payloadLength: Int

    public init(fin: Bool, reservedBits: UInt8 = 0, opcode: Opcode, maskingKey: MaskingKey?, payloadLength: Int) {
        self.fin = fin
        self.reservedBits = reservedBits
        self.opcode = opcode
        self.maskingKey = maskingKey
        self.payloadLength = payloadLength
    }

    /// The number of bytes this header takes on the wire (2 to 14).
    public var encodedSize: Int {
        let lengthSize = self.payloadLength <= 125 ? 0 : (self.payloadLength <= 0xFFFF ? 2 : 8)
        return 2 + lengthSize + (self.maskingKey == nil ? 0 : 4)
    }

    /// Appends the header in its shortest encoding to `buffer`.
    public func encode(into buffer: inout [UInt8]) {
        precondition(self.payloadLength >= 0, "negative payload length")
        buffer.append((self.fin ? 0x80 : 0) | (self.reservedBits & 0x7) << 4 | self.opcode.rawValue)
        let maskBit: UInt8 = self.maskingKey == nil ? 0 : 0x80
        if self.payloadLength <= 125 {
            buffer.append(maskBit | UInt8(self.payloadLength))
        } else if self.payloadLength <= 0xFFFF {
            buffer.append(maskBit | 126)
            buffer.append(UInt8(self.payloadLength >> 8))
            buffer.append(UInt8(truncatingIfNeeded: self.payloadLength))
        } else {
            buffer.append(maskBit | 127)
            let length = UInt64(self.payloadLength)
            for shift in stride(from: 56, through: 0, by: -8) {
                buffer.append(UInt8(truncatingIfNeeded: length >> UInt64(shift)))
            }
        }
        if let key = self.maskingKey {
            buffer.append(UInt8(key.value >> 24))
            buffer.append(UInt8(truncatingIfNeeded: key.value >> 16))
            buffer.append(UInt8(truncatingIfNeeded: key.value >> 8))
            buffer.append(UInt8(truncatingIfNeeded: key.value))
        }
    }
}

/// One complete frame with its payload unmasked, owned.
public struct Frame: Equatable, Sendable {
    public var fin: Bool
    public var reservedBits: UInt8
    public var opcode: Opcode
    /// The unmasked payload.
    public var payload: [UInt8]

    public init(fin: Bool, reservedBits: UInt8 = 0, opcode: Opcode, payload: [UInt8]) {
        self.fin = fin
        self.reservedBits = reservedBits
        self.opcode = opcode
        self.payload = payload
    }
}
