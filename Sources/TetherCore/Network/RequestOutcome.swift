/// How one request ended, as the request layer saw it. Kept apart from the path state: a failed request never
/// rewrites the path hint, and a path hint never decides a request's outcome.
public enum RequestOutcome: Equatable, Hashable, Sendable, CustomStringConvertible {
    case success
    /// No answer in time.
    case timeout
    /// The server refused the credentials (for example HTTP 401/403), or the app's request provider could not make
    /// them (`request_failed`).
    case authFailure
    /// The server failed (for example HTTP 5xx), with its status.
    case serverError(status: Int)
    /// The server answered with another status than the one asked for (for example HTTP 404 or 429 to a
    /// WebSocket upgrade).
    case rejected(status: Int)
    /// Nothing answered: refused, no route, the name did not resolve, or another connect error.
    case unreachable
    /// An established connection broke without a close (reset, end of stream, a failed write).
    case connectionLost
    /// The server closed the connection, with its close code when it sent one.
    case closedByServer(code: UInt16?)
    /// The server's answer broke the protocol (an invalid handshake response or frame).
    case invalidResponse
    /// The TLS handshake failed (a certificate that does not verify, a pin mismatch, a handshake error).
    case tlsFailure
}

extension RequestOutcome {
    /// How a session's connection attempt or connection ended, as a request outcome.
    public init(_ end: TransportEnd) {
        switch end {
        case .peerClosed(let code): self = .closedByServer(code: code)
        case .connectFailed(.timedOut, _): self = .timeout
        case .connectFailed: self = .unreachable
        case .handshakeRejected(let status, _):
            switch status {
            case 401, 403: self = .authFailure
            case 500..<600: self = .serverError(status: status)
            default: self = .rejected(status: status)
            }
        case .handshakeInvalid, .protocolViolation, .redirectFailed: self = .invalidResponse
        case .receiveFailed, .closedLocally: self = .connectionLost
        case .tlsFailed: self = .tlsFailure
        case .requestFailed: self = .authFailure
        case .proxyRejected(let status, _): self = .rejected(status: status)
        case .proxyUnreachable: self = .unreachable
        case .socksRejected(let refusal):
            switch refusal {
            case .noAcceptableMethod, .authenticationFailed, .notAllowedByRuleset: self = .authFailure
            case .generalFailure, .networkUnreachable, .hostUnreachable, .connectionRefused, .ttlExpired:
                self = .unreachable
            case .commandNotSupported, .addressTypeNotSupported, .unassigned: self = .invalidResponse
            }
        }
    }

    /// The case as Swift spells it, with its values: `timeout`, `rejected(status: 404)`, `closedByServer(code: 1011)`.
    public var description: String {
        switch self {
        case .success: "success"
        case .timeout: "timeout"
        case .authFailure: "authFailure"
        case .serverError(let status): "serverError(status: \(status))"
        case .rejected(let status): "rejected(status: \(status))"
        case .unreachable: "unreachable"
        case .connectionLost: "connectionLost"
        case .closedByServer(let code): "closedByServer(code: \(code.map(String.init) ?? "nil"))"
        case .invalidResponse: "invalidResponse"
        case .tlsFailure: "tlsFailure"
        }
    }

    /// A stable snake_case name for logs and status lines (`"timeout"`, `"server_error"`, ...).
    public var name: String {
        switch self {
        case .success: "success"
        case .timeout: "timeout"
        case .authFailure: "auth_failure"
        case .serverError: "server_error"
        case .rejected: "rejected"
        case .unreachable: "unreachable"
        case .connectionLost: "connection_lost"
        case .closedByServer: "closed_by_server"
        case .invalidResponse: "invalid_response"
        case .tlsFailure: "tls_failure"
        }
    }
}
