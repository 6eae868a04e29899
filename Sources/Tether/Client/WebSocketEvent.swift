import Foundation
import TetherCore

/// A snapshot of a client's connection, as a UI or a test sees it.
public struct ConnectionState: Equatable, Sendable {
    /// Where the session is: stopped, connecting, open, waiting (backoff), offline, suspended or failed.
    public var phase: SessionPhase
    /// The generation of the newest transport; 0 before the first connection attempt.
    public var generation: Int
    /// Failed attempts since the connection last proved healthy.
    public var attempts: Int
    /// When waiting: the next attempt's time, in milliseconds since the client was created.
    public var retryAt: Int?
    /// When failed: the non-retryable reason (for example a 401 handshake rejection).
    public var failure: CloseReason?
    /// The last measured ping round-trip time in milliseconds.
    public var lastRTT: Int?
    /// The network-path hint. Informs the UI; it never blocks a connection attempt.
    public var path: PathState
    /// Whether the path is expensive (cellular, a personal hotspot): the monitor's `isExpensive`. An app can defer
    /// large transfers while it is. False while the path is unknown and with a monitor that cannot tell.
    public var pathIsExpensive: Bool
    /// Whether the path is constrained (Low Data Mode): the monitor's `isConstrained`. An app should keep to what
    /// the user asked for while it is. False while the path is unknown and with a monitor that cannot tell.
    public var pathIsConstrained: Bool
    /// What a banner shows, from the path and the session's request outcomes kept apart: `.online`, `.offline`
    /// (no network), `.serverUnreachable(outcome)` (the network looks fine, the server did not answer as hoped,
    /// with how), or `.unknown` before anything is known. See `SessionMachine.connectivity`.
    public var connectivity: ConnectivityStatus

    public init(
        phase: SessionPhase, generation: Int, attempts: Int, retryAt: Int?,
        failure: CloseReason?, lastRTT: Int?, path: PathState, connectivity: ConnectivityStatus = .unknown,
        pathIsExpensive: Bool = false, pathIsConstrained: Bool = false
    ) {
        self.connectivity = connectivity
        self.phase = phase
        self.generation = generation
        self.attempts = attempts
        self.retryAt = retryAt
        self.failure = failure
        self.lastRTT = lastRTT
        self.path = path
        self.pathIsExpensive = pathIsExpensive
        self.pathIsConstrained = pathIsConstrained
    }
}

/// What a client reports, in the order it happened.
public enum WebSocketEvent: Sendable, CustomStringConvertible {
    /// The connection state changed; `cause` is the reason of the close that led here, if any. A new round-trip
    /// time alone is reported as `.roundTrip`, not as a state change (the state carries it as `lastRTT`).
    case stateChanged(ConnectionState, cause: CloseReason?)
    /// A message from the server, in the order the server sent it.
    case message(WebSocketMessage)
    /// A heartbeat round trip, in milliseconds.
    case roundTrip(milliseconds: Int)
    /// A queued message (`SendPolicy.queued`) left the outbox without being written in full; `reason` says why and
    /// whether the peer may have it.
    case outboxDropped(WebSocketMessage, reason: OutboxDropReason)
    /// A log record from the session machine: generation, event kind, monotonic time, phases, reason.
    /// Records never hold payloads, header values or URL queries.
    case record(LogRecord)

    /// A description safe for logs: message bodies are reduced to their kind and size.
    public var description: String {
        switch self {
        case .stateChanged(let state, let cause):
            let reason = cause.map { " cause=\($0.name)" } ?? ""
            return "state \(state.phase) gen=\(state.generation) attempts=\(state.attempts)\(reason)"
        case .message(.text(let text)):
            return "message text \(text.utf8.count) bytes"
        case .message(.binary(let data)):
            return "message binary \(data.count) bytes"
        case .roundTrip(let milliseconds):
            return "rtt \(milliseconds) ms"
        case .outboxDropped(let message, let reason):
            return "outbox dropped \(message.byteCount) bytes (\(reason))"
        case .record(let record):
            return record.logLine
        }
    }
}

extension LogRecord {
    /// One line, `key=value` pairs, with nothing but the record's own typed fields.
    public var logLine: String {
        var line = "t=\(self.time) gen=\(self.generation) event=\(self.kind.rawValue) from=\(self.from) to=\(self.to)"
        if let reason = self.reason { line += " reason=\(reason.name)" }
        if let code = self.code { line += " code=\(code)" }
        if let rtt = self.rtt { line += " rtt_ms=\(rtt)" }
        if let attempt = self.attempt { line += " attempt=\(attempt)" }
        if let delay = self.delay { line += " delay_ms=\(delay)" }
        if let bytes = self.bytes { line += " bytes=\(bytes)" }
        if let path = self.path { line += " path=\(path)" }
        if let ignored = self.ignored { line += " ignored=\(ignored.rawValue)" }
        return line
    }
}

extension URL {
    /// The URL without user info, query or fragment: the only form Tether ever shows.
    package var redactedForLogs: String {
        guard var components = URLComponents(url: self, resolvingAgainstBaseURL: false) else {
            return "<invalid URL>"
        }
        components.user = nil
        components.password = nil
        components.query = nil
        components.fragment = nil
        return components.string ?? "<invalid URL>"
    }
}
