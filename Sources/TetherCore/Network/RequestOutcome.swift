/// How one request ended, as the request layer saw it. Kept apart from the path state: a failed request never
/// rewrites the path hint, and a path hint never decides a request's outcome.
public enum RequestOutcome: Equatable, Hashable, Sendable {
    case success
    /// No answer in time.
    case timeout
    /// The server refused the credentials (for example HTTP 401/403).
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
        case .handshakeInvalid, .protocolViolation: self = .invalidResponse
        case .receiveFailed, .closedLocally: self = .connectionLost
        case .tlsFailed: self = .tlsFailure
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

/// What a UI shows about a session's connectivity (`SessionMachine.connectivity`): "no network" and "server
/// unreachable" apart, as the network-hint source document asks.
public enum ConnectivityStatus: Equatable, Hashable, Sendable {
    /// Nothing known yet: no attempt has finished and the path is not known to be unavailable. Never "offline".
    case unknown
    /// The latest request (an opening handshake, a pong) succeeded.
    case online
    /// No network: the path is unavailable and no open connection proves otherwise.
    case offline
    /// The network path looks usable (or is unknown) but the server did not answer as hoped; `outcome` says how
    /// (unreachable, timeout, rejected, closed, lost, ...).
    case serverUnreachable(RequestOutcome)
}

/// What a UI shows about connectivity.
public enum ConnectivityBanner: Equatable, Hashable, Sendable {
    /// Nothing to show (also while the path is still unknown: unknown is never "offline").
    case hidden
    /// The path is unavailable; `pending` user operations will run when it returns.
    case offline(pending: Int)
    /// The path looks fine but the latest request failed; the user's retry goes to a real request.
    case requestFailed(RequestOutcome)
}

/// What automatic transfers the app should do on the current path. User operations are never dropped for it.
public enum TransferPolicy: Equatable, Hashable, Sendable {
    /// No restriction.
    case normal
    /// The path is expensive (for example cellular or a hotspot): defer large automatic transfers.
    case deferLarge
    /// The path is constrained (Low Data Mode): only what the user explicitly asked for.
    case essentialOnly
}

/// What happened to a user operation after its request finished.
public enum OperationDisposition: Equatable, Hashable, Sendable {
    /// It succeeded and is forgotten.
    case completed
    /// It failed with `outcome`, which the UI shows; the user decides whether to retry.
    case failed(RequestOutcome)
    /// It timed out while the path was unavailable: it is kept and handed back once when the path returns.
    case awaitingRecovery
}
