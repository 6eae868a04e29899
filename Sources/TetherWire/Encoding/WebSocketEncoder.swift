/// Messages in, bytes out, for one role.
///
/// A client masks every frame with a fresh 4-byte key from `random` (RFC 6455 §5.3 asks for an unpredictable
/// key: production uses `SystemRandomNumberGenerator`, the system CSPRNG, getrandom on Linux); a server sends
/// unmasked frames. Text and binary messages are split into frames of at most `fragmentSize` payload bytes.
/// Frames are appended to a caller-owned buffer so that it can be reused. The methods are inlinable so that the
/// caller's module specialises them for its payload and random source types.
public struct WebSocketEncoder<Random: RandomNumberGenerator> {
    /// The role this encoder writes for.
    public let role: Role
    /// The largest payload per data frame; longer messages are fragmented.
    public let fragmentSize: Int
    /// The source of masking keys (used by the client role only).
    public var random: Random

    /// - Parameters:
    ///   - role: this endpoint's role; a client masks its frames.
    ///   - fragmentSize: the largest payload per data frame (default: never fragment). Must be at least 1.
    ///   - random: the source of masking keys.
    public init(role: Role, fragmentSize: Int = .max, random: Random) {
        precondition(fragmentSize >= 1, "fragmentSize must be at least 1")
        self.role = role
        self.fragmentSize = fragmentSize
        self.random = random
    }

    /// Appends a text or binary message, fragmented at `fragmentSize`.
    ///
    /// For `.text` the payload must be UTF-8; it is not validated here (use `text(_:into:)` for a `String`).
    /// - Parameter reservedBits: RSV bits of the message's first frame (`0b100`: compressed by permessage-deflate);
    ///   continuation frames carry none.
    @inlinable
    public mutating func encode(
        _ opcode: Opcode, payload: some Collection<UInt8>, reservedBits: UInt8 = 0, into buffer: inout [UInt8]
    ) {
        precondition(opcode == .text || opcode == .binary, "encode sends text or binary; use ping, pong, close")
        var start = payload.startIndex
        var frameOpcode = opcode
        var frameReservedBits = reservedBits
        repeat {
            let end =
                payload.index(start, offsetBy: self.fragmentSize, limitedBy: payload.endIndex) ?? payload.endIndex
            self.encodeFrame(
                frameOpcode, fin: end == payload.endIndex, reservedBits: frameReservedBits,
                payload: payload[start..<end], into: &buffer)
            frameOpcode = .continuation
            frameReservedBits = 0
            start = end
        } while start != payload.endIndex
    }

    /// Appends a text or binary message from raw memory, fragmented at `fragmentSize`.
    @inlinable
    public mutating func encode(
        _ opcode: Opcode, payload: UnsafeRawBufferPointer, reservedBits: UInt8 = 0, into buffer: inout [UInt8]
    ) {
        payload.withMemoryRebound(to: UInt8.self) {
            self.encode(opcode, payload: $0, reservedBits: reservedBits, into: &buffer)
        }
    }

    /// Appends a text message.
    @inlinable
    public mutating func text(_ text: String, into buffer: inout [UInt8]) {
        var text = text
        text.withUTF8 { self.encode(.text, payload: $0, into: &buffer) }
    }

    /// Appends a binary message.
    @inlinable
    public mutating func binary(_ payload: some Collection<UInt8>, into buffer: inout [UInt8]) {
        self.encode(.binary, payload: payload, into: &buffer)
    }

    /// Appends a ping. Throws `controlPayloadTooLong` beyond 125 bytes.
    @inlinable
    public mutating func ping(_ payload: some Collection<UInt8>, into buffer: inout [UInt8]) throws(WireUsageError) {
        guard payload.count <= 125 else { throw WireUsageError.controlPayloadTooLong(payload.count) }
        self.encodeFrame(.ping, fin: true, payload: payload, into: &buffer)
    }

    /// Appends a pong (send the ping's payload back). Throws `controlPayloadTooLong` beyond 125 bytes.
    @inlinable
    public mutating func pong(_ payload: some Collection<UInt8>, into buffer: inout [UInt8]) throws(WireUsageError) {
        guard payload.count <= 125 else { throw WireUsageError.controlPayloadTooLong(payload.count) }
        self.encodeFrame(.pong, fin: true, payload: payload, into: &buffer)
    }

    /// Appends a close frame.
    ///
    /// - Parameters:
    ///   - code: the status code, or nil for an empty close frame (then `reason` must be empty). Must be valid
    ///     on the wire (`CloseCode.isValidOnWire`): 1005, 1006 and 1015 are reported locally, never sent.
    ///   - reason: UTF-8 text; code and reason together must fit in 125 bytes.
    @inlinable
    public mutating func close(code: UInt16?, reason: String, into buffer: inout [UInt8]) throws(WireUsageError) {
        guard let code else {
            guard reason.isEmpty else { throw WireUsageError.closeReasonWithoutCode }
            self.encodeFrame(.close, fin: true, payload: EmptyCollection<UInt8>(), into: &buffer)
            return
        }
        guard CloseCode.isValidOnWire(code) else { throw WireUsageError.invalidCloseCode(code) }
        let payloadLength = 2 + reason.utf8.count
        guard payloadLength <= 125 else { throw WireUsageError.controlPayloadTooLong(payloadLength) }
        var payload: [UInt8] = [UInt8(code >> 8), UInt8(truncatingIfNeeded: code)]
        payload.append(contentsOf: reason.utf8)
        self.encodeFrame(.close, fin: true, payload: payload, into: &buffer)
    }

    /// Appends one frame as given, masked for the client role. No checks beyond the header's own encoding:
    /// the caller is responsible for FIN on control frames, their 125-byte limit, and opcode order.
    @inlinable
    public mutating func encodeFrame(
        _ opcode: Opcode,
        fin: Bool,
        reservedBits: UInt8 = 0,
        payload: some Collection<UInt8>,
        into buffer: inout [UInt8]
    ) {
        let key: MaskingKey? =
            switch self.role {
            case .client: MaskingKey(value: self.random.next())
            case .server: nil
            }
        let length = payload.count
        FrameHeader(fin: fin, reservedBits: reservedBits, opcode: opcode, maskingKey: key, payloadLength: length)
            .encode(into: &buffer)
        guard let key, length > 0 else {
            buffer.append(contentsOf: payload)
            return
        }
        // A payload in contiguous memory (every message a connection sends) is masked as it is copied in: one pass.
        let copied: Void? = payload.withContiguousStorageIfAvailable { source in
            buffer.append(addingCapacity: length) { frame in
                frame.withUnsafeMutableBufferPointer { destination, initialized in
                    key.apply(copying: UnsafeRawBufferPointer(source), to: UnsafeMutableRawBufferPointer(destination))
                    initialized = length
                }
            }
        }
        guard copied == nil else { return }
        let payloadStart = buffer.count
        buffer.append(contentsOf: payload)
        buffer.withUnsafeMutableBytes { bytes in
            key.apply(to: UnsafeMutableRawBufferPointer(rebasing: bytes[payloadStart..<payloadStart + length]))
        }
    }
}

extension WebSocketEncoder: Sendable where Random: Sendable {}

extension WebSocketEncoder where Random == SystemRandomNumberGenerator {
    /// An encoder whose masking keys come from the system CSPRNG.
    public init(role: Role, fragmentSize: Int = .max) {
        self.init(role: role, fragmentSize: fragmentSize, random: SystemRandomNumberGenerator())
    }
}
