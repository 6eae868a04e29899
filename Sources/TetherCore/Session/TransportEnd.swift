/// Why a connection attempt could not be established at the TCP / TLS level.
public enum ConnectFailure: Equatable, Hashable, Sendable, CustomStringConvertible {
    /// The peer answered with a reset: nothing listens there (`ECONNREFUSED`).
    case refused
    /// No route, network down or host unreachable (`ENETUNREACH`, `EHOSTUNREACH`, `ENETDOWN`).
    case unreachable
    /// The name did not resolve.
    case nameResolution
    /// The TCP connect or the opening handshake did not finish within the connect timeout.
    case timedOut
    /// The transport cannot serve this URL at all (for example `wss://` without TLS support). Not retryable.
    case unsupported
    /// The peer (or a middlebox) reset the connection before it opened (`ECONNRESET`): during the TCP connect, TLS
    /// or the opening handshake alike, so that the name does not depend on when the reset came.
    case reset
    /// Any other system error, with its `errno` value (or a transport-specific code).
    case system(Int32)

    /// The case as Swift spells it: `refused`, `nameResolution`, `system(24)`.
    public var description: String {
        switch self {
        case .refused: "refused"
        case .unreachable: "unreachable"
        case .nameResolution: "nameResolution"
        case .timedOut: "timedOut"
        case .unsupported: "unsupported"
        case .reset: "reset"
        case .system(let code): "system(\(code))"
        }
    }
}

/// The single terminal event of one transport generation: how the connection ended.
///
/// Every transport reports exactly one of these per generation, whatever happened first.
public enum TransportEnd: Equatable, Hashable, Sendable, CustomStringConvertible {
    /// The peer sent a close frame. `code` is nil when the frame had no status code (1005 on the Apple API).
    case peerClosed(code: UInt16?)
    /// The connection could not be established. `tried` lists every address tried and how each try ended (see
    /// `ConnectAttempt`), empty when none was (the name did not resolve, or a transport that does not say).
    case connectFailed(ConnectFailure, tried: [ConnectAttempt] = [])
    /// The server answered the opening handshake with a status other than 101.
    /// `retryAfter` is the wait the `Retry-After` header asks for, in milliseconds, when present and valid (an
    /// HTTP-date already turned into a delay); as the server sent it: the session caps it
    /// (`SessionConfiguration.maximumRetryAfter`).
    case handshakeRejected(status: Int, retryAfter: Int?)
    /// The server redirected the opening handshake (`status`: the 301, 302, 303, 307 or 308 of the redirect not
    /// followed) and the redirect could not be followed (see `RedirectFailure`). A redirect that is followed is no
    /// end: the transport reports it (`TransportEvent.redirected`) and goes on to the new URL within the same
    /// attempt. With redirects off (`maximumRedirects` 0) a redirect is `handshakeRejected` with its status.
    case redirectFailed(RedirectFailure, status: Int)
    /// The server's response did not validate (bad accept key, unoffered subprotocol or extension, malformed
    /// head, ...). `detail` says what failed in a few fixed words (for example `"Sec-WebSocket-Accept does not
    /// match the key"`); it never holds a header value.
    case handshakeInvalid(detail: String)
    /// The HTTP proxy refused the CONNECT tunnel with `status` (407 authentication required, 403 forbidden, 502 the
    /// origin unreachable from the proxy, ...); retried or not by the rules of a handshake rejection. `retryAfter` as
    /// in `handshakeRejected`.
    case proxyRejected(status: Int, retryAfter: Int?)
    /// The SOCKS5 proxy refused the tunnel: the authentication or the `CONNECT` (its reply code). Retried or not by
    /// the rules of the HTTP proxy refusal of the same meaning (`SOCKSRefusal.isPermanent`).
    case socksRejected(SOCKSRefusal)
    /// The proxy itself (HTTP or SOCKS5) could not be reached (resolved, connected to); `tried` as in
    /// `connectFailed`, the proxy's addresses.
    case proxyUnreachable(ConnectFailure, tried: [ConnectAttempt] = [])
    /// TLS failed before the connection opened: `detail` names what in a few fixed words (for example
    /// `"hostname mismatch"`, `"certificate expired"`, `"pin mismatch"`), never data from the peer. `permanent`
    /// when retrying cannot help (the server's certificate does not verify): the session stops instead of
    /// retrying. A TLS failure after the open is an ordinary loss, `.receiveFailed`.
    case tlsFailed(detail: String, permanent: Bool)
    /// The peer broke the protocol; we closed with `code` (1002 protocol error, 1007 invalid data, 1009 too big).
    case protocolViolation(code: UInt16)
    /// The connection broke without a close frame: reset, end of stream, or a read/write error.
    case receiveFailed
    /// The connection ended because we closed it (an acknowledged or timed-out closing handshake).
    case closedLocally
    /// The attempt ended before a connection was made: the request provider (`WebSocketConfiguration
    /// .requestProvider`) threw, or made a request the handshake cannot carry. `detail` says what in a few fixed
    /// words (`"the provider threw AuthError"`, `"headers: the handshake sets Host itself"`), never a header value
    /// or a URL. Retried with backoff.
    case requestFailed(detail: String)

    /// The case as Swift spells it, with its values: `peerClosed(code: 1000)`, `handshakeRejected(status: 503,
    /// retryAfter: 2000)`, `tlsFailed(detail: "hostname mismatch", permanent: true)`.
    public var description: String {
        func tried(_ tried: [ConnectAttempt]) -> String {
            tried.isEmpty ? "" : ", tried: [" + tried.map(\.description).joined(separator: ", ") + "]"
        }
        func optional(_ value: Int?) -> String { value.map(String.init) ?? "nil" }
        switch self {
        case .peerClosed(let code): return "peerClosed(code: \(optional(code.map(Int.init))))"
        case .connectFailed(let failure, let attempts): return "connectFailed(\(failure)\(tried(attempts)))"
        case .handshakeRejected(let status, let retryAfter):
            return "handshakeRejected(status: \(status), retryAfter: \(optional(retryAfter)))"
        case .handshakeInvalid(let detail): return "handshakeInvalid(detail: \"\(detail)\")"
        case .redirectFailed(let failure, let status): return "redirectFailed(\(failure), status: \(status))"
        case .proxyRejected(let status, let retryAfter):
            return "proxyRejected(status: \(status), retryAfter: \(optional(retryAfter)))"
        case .socksRejected(let refusal): return "socksRejected(\(refusal))"
        case .proxyUnreachable(let failure, let attempts): return "proxyUnreachable(\(failure)\(tried(attempts)))"
        case .tlsFailed(let detail, let permanent): return "tlsFailed(detail: \"\(detail)\", permanent: \(permanent))"
        case .protocolViolation(let code): return "protocolViolation(code: \(code))"
        case .receiveFailed: return "receiveFailed"
        case .closedLocally: return "closedLocally"
        case .requestFailed(let detail): return "requestFailed(detail: \"\(detail)\")"
        }
    }
}
