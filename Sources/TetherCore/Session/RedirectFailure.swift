/// Why a redirect of the opening handshake (301, 302, 303, 307, 308) was not followed
/// (`TransportEnd.redirectFailed`). Every case stops the session: the server answers the same way on the next
/// attempt (docs/retry.md).
public enum RedirectFailure: Equatable, Hashable, Sendable, CustomStringConvertible {
    /// The server redirected again after `limit` redirects had been followed in this attempt
    /// (`WebSocketConfiguration.maximumRedirects`).
    case tooMany(limit: Int)
    /// The `Location` names a URL this attempt has already asked (A → B → A).
    case loop
    /// From `wss://` to `ws://` (or `http://`): TLS is never given up on a server's word.
    case downgrade
    /// The `Location` cannot be followed; the detail says why in a few fixed words (`missing`, `not a URI
    /// reference`, `scheme not ws, wss, http or https`, `no host`, `port out of range`), never the value itself.
    case invalidLocation(String)
    /// The transport cannot follow this hop as it would the first; the detail says why in fixed words (for
    /// example `URLSessionTransport`, whose session has one proxy setting, when the next host's differs).
    case unsupported(String)

    /// What went wrong, in words fit for a record's `detail`: `more than 5 redirects`, `redirect loop`,
    /// `redirect from wss to ws`, `invalid Location: no host`.
    public var description: String {
        switch self {
        case .tooMany(let limit): "more than \(limit) redirects"
        case .loop: "redirect loop"
        case .downgrade: "redirect from wss to ws"
        case .invalidLocation(let detail): "invalid Location: \(detail)"
        case .unsupported(let detail): "redirect not followed: \(detail)"
        }
    }
}
