extension CloseReason: CustomStringConvertible {
    /// The case as Swift spells it, with its values (`pongTimeout`, `peerClosed(code: 1000)`,
    /// `handshakeRejected(status: 401)`, `connectFailed(refused, tried: [192.0.2.2:80: refused])`), so that a printed
    /// reason, or an optional one, reads like the docs instead of `Optional(TetherCore.CloseReason.pongTimeout)`.
    /// `name` is the snake_case name of logs.
    public var description: String {
        switch self {
        case .pongTimeout: "pongTimeout"
        case .pingFailed: "pingFailed"
        case .probeTimeout: "probeTimeout"
        case .connectTimeout: "connectTimeout"
        case .receiveFailed: "receiveFailed"
        case .peerClosed(let code): "peerClosed(code: \(code.map(String.init) ?? "nil"))"
        case .connectFailed(let failure, let tried): "connectFailed(\(failure)\(Self.triedText(tried)))"
        case .handshakeRejected(let status): "handshakeRejected(status: \(status))"
        case .handshakeInvalid(let detail): "handshakeInvalid(detail: \"\(detail)\")"
        case .redirectFailed(let failure): "redirectFailed(\"\(failure)\")"
        case .proxyRejected(let status): "proxyRejected(status: \(status))"
        case .socksRejected(let refusal): "socksRejected(\(refusal))"
        case .proxyUnreachable(let failure, let tried): "proxyUnreachable(\(failure)\(Self.triedText(tried)))"
        case .tlsFailed(let detail): "tlsFailed(detail: \"\(detail)\")"
        case .protocolViolation(let code): "protocolViolation(code: \(code))"
        case .userStopped: "userStopped"
        case .enteredBackground: "enteredBackground"
        case .handedOver: "handedOver"
        case .requestFailed(let detail): "requestFailed(detail: \"\(detail)\")"
        }
    }

    /// `, tried: [...]` when any address was tried, else nothing.
    private static func triedText(_ tried: [ConnectAttempt]) -> String {
        tried.isEmpty ? "" : ", tried: [" + tried.map(\.description).joined(separator: ", ") + "]"
    }
}
