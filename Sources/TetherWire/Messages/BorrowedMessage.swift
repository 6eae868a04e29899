/// A complete message lent by `WebSocketDecoder.nextMessage(_:)` without copying. The pointers are valid only
/// inside the closure it is passed to; do not let them escape.
public struct BorrowedMessage {
    /// `.text`, `.binary`, `.ping`, `.pong` or `.close`.
    public var opcode: Opcode
    /// The unmasked payload. For text, valid UTF-8; for close, the raw close payload (code and reason).
    public var payload: UnsafeRawBufferPointer
    /// The RSV bits of the message's first frame: always 0 unless the decoder allows reserved bits for an
    /// extension (`0b100`: compressed by permessage-deflate; `WebSocketConnection` lends such a message inflated, the
    /// bit still set to say that it came compressed).
    public var reservedBits: UInt8
    /// The storage of its own that a large binary message's payload was received into (`payload` is all of it), when
    /// it was (`PayloadStorage`): a receiver that keeps the message may keep this instead of copying `payload` (the
    /// bytes stay valid, and unchanged, as long as it is referenced). Nil for a payload lent from the decoder's
    /// buffer, text, an assembled fragmented message and an inflated one.
    public var storage: PayloadStorage?

    public init(
        opcode: Opcode, payload: UnsafeRawBufferPointer, reservedBits: UInt8 = 0, storage: PayloadStorage? = nil
    ) {
        self.opcode = opcode
        self.payload = payload
        self.reservedBits = reservedBits
        self.storage = storage
    }

    /// For a close frame, the status code, or nil when the payload is empty.
    public var closeCode: UInt16? {
        guard self.opcode == .close, self.payload.count >= 2 else { return nil }
        return UInt16(self.payload[0]) << 8 | UInt16(self.payload[1])
    }

    /// For a close frame, the reason bytes (valid UTF-8, possibly empty).
    public var closeReason: UnsafeRawBufferPointer {
        guard self.opcode == .close, self.payload.count > 2 else {
            return UnsafeRawBufferPointer(start: nil, count: 0)
        }
        return UnsafeRawBufferPointer(rebasing: self.payload[2...])
    }

    /// An owned copy.
    var message: WireMessage {
        switch self.opcode {
        case .text: .text(String(decoding: self.payload, as: UTF8.self))
        case .ping: .ping(Array(self.payload))
        case .pong: .pong(Array(self.payload))
        case .close: .close(code: self.closeCode, reason: String(decoding: self.closeReason, as: UTF8.self))
        default: .binary(Array(self.payload))
        }
    }
}
