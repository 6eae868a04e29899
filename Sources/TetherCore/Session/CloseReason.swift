/// Why a transport generation ended. Every close the machine orders or observes carries one.
public enum CloseReason: Equatable, Hashable, Sendable {
    /// No pong before the heartbeat deadline.
    case pongTimeout
    /// The ping could not be sent (the transport reported an error for the outstanding ping).
    case pingFailed
    /// No pong before the deadline of a liveness probe (after a path change or on foreground).
    case probeTimeout
    /// TCP, TLS and the opening handshake did not finish within `SessionConfiguration.connectTimeout`. The machine
    /// owns that deadline; a transport's own timer reporting `.connectFailed(.timedOut)` gets the same reason, so
    /// the reason never depends on which fired first.
    case connectTimeout
    /// The connection broke without a close frame.
    case receiveFailed
    /// The peer sent a close frame (`code` nil when it carried no status code).
    case peerClosed(code: UInt16?)
    /// The connection could not be established; `tried`, every address tried (see `TransportEnd.connectFailed`).
    case connectFailed(ConnectFailure, tried: [ConnectAttempt] = [])
    /// The server answered the opening handshake with this HTTP status instead of 101.
    case handshakeRejected(status: Int)
    /// The server's response did not validate; `detail` says what failed (fixed words, never a header value).
    case handshakeInvalid(detail: String)
    /// A redirect of the opening handshake could not be followed (a loop, too many, a downgrade to `ws://`, a
    /// `Location` that cannot be followed); the record's `code` is the redirect's status. Not retried.
    case redirectFailed(RedirectFailure)
    /// The HTTP proxy refused the CONNECT tunnel with this status.
    case proxyRejected(status: Int)
    /// The SOCKS5 proxy refused the tunnel (named `proxy_rejected`, its detail the refusal).
    case socksRejected(SOCKSRefusal)
    /// The proxy could not be reached; `tried`, every address of the proxy tried.
    case proxyUnreachable(ConnectFailure, tried: [ConnectAttempt] = [])
    /// TLS failed before the connection opened; `detail` says what (fixed words, never data from the peer).
    case tlsFailed(detail: String)
    /// The peer broke the protocol and the transport closed with `code`.
    case protocolViolation(code: UInt16)
    /// `stop` was called.
    case userStopped
    /// The app went to the background under `LifecyclePolicy.closeInBackground`.
    case enteredBackground
    /// The request provider could not make this attempt's request (it threw, or made one the handshake cannot
    /// carry); `detail` says what (fixed words, never a header value or a URL). Retried with backoff.
    case requestFailed(detail: String)
    /// A make-before-break handover left this connection for the one on the new path (closed with 1001 after the
    /// drain, or at once when the session's new connection ended during the drain).
    case handedOver

    /// A stable snake_case name for logs, without any associated value (for example `"peer_closed"`).
    public var name: String {
        switch self {
        case .pongTimeout: "pong_timeout"
        case .pingFailed: "ping_failed"
        case .probeTimeout: "probe_timeout"
        case .connectTimeout: "connect_timeout"
        case .receiveFailed: "receive_failed"
        case .peerClosed: "peer_closed"
        case .connectFailed: "connect_failed"
        case .handshakeRejected: "handshake_rejected"
        case .handshakeInvalid: "handshake_invalid"
        case .redirectFailed: "redirect_failed"
        case .tlsFailed: "tls_failed"
        case .proxyRejected, .socksRejected: "proxy_rejected"
        case .proxyUnreachable: "proxy_unreachable"
        case .protocolViolation: "protocol_violation"
        case .userStopped: "user_stopped"
        case .enteredBackground: "entered_background"
        case .handedOver: "handed_over"
        case .requestFailed: "request_failed"
        }
    }

    /// What the name alone does not say, for logs: `handshakeInvalid`'s and `tlsFailed`'s detail, why a redirect
    /// was not followed (`redirect loop`), the SOCKS refusal (`SOCKS host unreachable`), the addresses a failed
    /// connect tried (`tried 192.0.2.2:80: refused, [2001:db8::2]:80: unreachable`); nil for every other reason (a
    /// close code or HTTP status is in the record's `code`).
    public var detail: String? {
        switch self {
        case .handshakeInvalid(let detail), .tlsFailed(let detail), .requestFailed(let detail): detail
        case .socksRejected(let refusal): refusal.description
        case .redirectFailed(let failure): failure.description
        case .connectFailed(_, let tried), .proxyUnreachable(_, let tried):
            tried.isEmpty ? nil : "tried " + tried.map(\.description).joined(separator: ", ")
        case .pongTimeout, .pingFailed, .probeTimeout, .connectTimeout, .receiveFailed, .peerClosed,
            .handshakeRejected, .protocolViolation, .userStopped, .enteredBackground, .proxyRejected, .handedOver:
            nil
        }
    }

    /// The reason for a transport's terminal event. A local close the machine did not order (`closedLocally` on a
    /// live generation) is treated as a broken connection, `.receiveFailed`; a transport's own connect timeout is
    /// `.connectTimeout`, the reason of the machine's deadline.
    public init(_ end: TransportEnd) {
        switch end {
        case .peerClosed(let code): self = .peerClosed(code: code)
        case .connectFailed(.timedOut, _): self = .connectTimeout
        case .connectFailed(let failure, let tried): self = .connectFailed(failure, tried: tried)
        case .handshakeRejected(let status, _): self = .handshakeRejected(status: status)
        case .handshakeInvalid(let detail): self = .handshakeInvalid(detail: detail)
        case .redirectFailed(let failure, _): self = .redirectFailed(failure)
        case .tlsFailed(let detail, _): self = .tlsFailed(detail: detail)
        case .proxyRejected(let status, _): self = .proxyRejected(status: status)
        case .socksRejected(let refusal): self = .socksRejected(refusal)
        case .proxyUnreachable(let failure, let tried): self = .proxyUnreachable(failure, tried: tried)
        case .protocolViolation(let code): self = .protocolViolation(code: code)
        case .receiveFailed, .closedLocally: self = .receiveFailed
        case .requestFailed(let detail): self = .requestFailed(detail: detail)
        }
    }
}
