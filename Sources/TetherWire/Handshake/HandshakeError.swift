/// Why an HTTP/1.1 upgrade handshake failed. Messages name what was wrong and never echo header values,
/// which may hold credentials.
public enum HandshakeError: Error, Equatable, Sendable {
    /// The server answered with a status other than 101. `retryAfter` is its `Retry-After` field when it had
    /// exactly one and it was valid (delay-seconds of any length, or an HTTP-date with the response's `Date`).
    case rejected(status: Int, retryAfter: RetryAfter?)
    /// The server redirected the upgrade (301, 302, 303, 307 or 308; RFC 9110 §15.4). `location` is its
    /// `Location` field as sent, when it had exactly one (a URI reference, maybe relative: resolve it against the
    /// request's URL), nil otherwise. It may carry a token in its query: never log it whole.
    case redirected(status: Int, location: String?)
    /// The header block did not end within `limit` bytes.
    case headerTooLarge(limit: Int)
    /// The bytes are not an HTTP/1.1 message head.
    case malformed(String)
    /// A well-formed HTTP message that is not a valid WebSocket upgrade (missing or wrong Upgrade, Connection,
    /// Sec-WebSocket-Accept, Key or Version, a subprotocol or extension that was not offered, ...).
    case invalidUpgrade(String)

    /// What went wrong, in a few words fit for a log or a close reason, for example
    /// `"Sec-WebSocket-Accept does not match the key"`. Never a header value: the parsers' texts are fixed.
    public var detail: String {
        switch self {
        case .rejected(let status, _): "status \(status)"
        case .redirected(let status, _): "redirect \(status)"
        case .headerTooLarge(let limit): "header block over \(limit) bytes"
        case .malformed(let detail), .invalidUpgrade(let detail): detail
        }
    }
}
