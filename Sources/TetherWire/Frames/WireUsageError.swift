/// Misuse of the codec by the caller (as opposed to a `ProtocolError`, a violation by the peer).
public enum WireUsageError: Error, Equatable, Sendable {
    /// A control frame payload (ping, pong, or close code plus reason) over 125 bytes.
    case controlPayloadTooLong(Int)
    /// A close code that may not be sent (see `CloseCode.isValidOnWire`).
    case invalidCloseCode(UInt16)
    /// A close reason given without a close code.
    case closeReasonWithoutCode
    /// A handshake key that is not 16 bytes.
    case invalidKeyLength(Int)
    /// A handshake field that cannot be sent as given; names the field, never echoes its value.
    case invalidHandshakeField(String)
    /// An extra handshake header that the handshake itself sets (Host, Upgrade, Connection, Sec-WebSocket-Key, ...).
    case reservedHeader(String)
}
