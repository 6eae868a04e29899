/// Why an HTTP/1.1 upgrade handshake failed. Messages name what was wrong and never echo header values,
/// which may hold credentials.
public enum HandshakeError: Error, Equatable, Sendable {
    /// The server answered with a status other than 101. `retryAfterSeconds` is the `Retry-After` header when it
    /// is present and in delta-seconds form (an HTTP-date is not interpreted).
    case rejected(status: Int, retryAfterSeconds: Int?)
    /// The header block did not end within `limit` bytes.
    case headerTooLarge(limit: Int)
    /// The bytes are not an HTTP/1.1 message head.
    case malformed(String)
    /// A well-formed HTTP message that is not a valid WebSocket upgrade (missing or wrong Upgrade, Connection,
    /// Sec-WebSocket-Accept, Key or Version, a subprotocol or extension that was not offered, ...).
    case invalidUpgrade(String)
}
