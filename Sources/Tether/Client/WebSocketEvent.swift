import Foundation
import TetherCore

/// What a client reports, in the order it happened.
public enum WebSocketEvent: Sendable, CustomStringConvertible {
    /// The connection state changed; `cause` is the reason of the close that led here, if any. A new round-trip
    /// time alone is reported as `.roundTrip`, not as a state change (the state carries it as `lastRTT`).
    ///
    /// (Indirect: a state is 176 bytes, the other cases at most 72, and every event is moved into and out of the
    /// client's buffer; a state change is rare beside the records and messages.)
    indirect case stateChanged(ConnectionState, cause: CloseReason?)
    /// A message from the server, in the order the server sent it on its connection, with the generation of that
    /// connection. One generation at a time, except during a make-before-break handover
    /// (`InterfaceSwitchPolicy.makeBeforeBreak`), when the old connection's last messages and the new one's first
    /// can interleave: a feed broadcast on both arrives twice, and its own sequence numbers de-duplicate it.
    case message(WebSocketMessage, generation: Int)
    /// A heartbeat round trip, in milliseconds.
    case roundTrip(milliseconds: Int)
    /// A queued message (`SendPolicy.queued`) left the outbox without being written in full; `reason` says why and
    /// whether the peer may have it.
    case outboxDropped(WebSocketMessage, reason: OutboxDropReason)
    /// A connection was lost (a pong or probe timeout, a failed ping, or an end the client did not ask for) after
    /// these messages were written to it and before a pong proved it had received them: they may or may not have
    /// arrived. `.now` and `.queued` sends alike; nothing is sent again (see `UnconfirmedMessages`). Reported
    /// before the state change that the loss causes. A connection the client closed on purpose (`stop()`, the
    /// background, the end of a handover's drain) reports nothing when the server answered the close (it read
    /// everything before it); it is lost like any other when it ends otherwise (reset, or the close unanswered).
    case unconfirmed(UnconfirmedMessages)
    /// What became of an acknowledged send (acknowledged, expired, given up), or a gap in a feed: only with
    /// `WebSocketConfiguration.delivery` on (docs/delivery.md).
    case delivery(DeliveryEvent)
    /// A log record from the session machine: generation, event kind, monotonic time, phases, reason.
    /// Records never hold payloads, header values or URL queries.
    case record(LogRecord)

    /// A description safe for logs: message bodies are reduced to their kind and size.
    public var description: String {
        switch self {
        case .stateChanged(let state, let cause):
            let reason = cause.map { " cause=\($0.name)" } ?? ""
            return "state \(state.phase) gen=\(state.generation) attempts=\(state.attempts)\(reason)"
        case .message(.text(let text), let generation):
            return "message text \(text.utf8.count) bytes gen=\(generation)"
        case .message(.binary(let data), let generation):
            return "message binary \(data.count) bytes gen=\(generation)"
        case .roundTrip(let milliseconds):
            return "rtt \(milliseconds) ms"
        case .outboxDropped(let message, let reason):
            return "outbox dropped \(message.byteCount) bytes (\(reason))"
        case .unconfirmed(let unconfirmed):
            let bytes = unconfirmed.messages.reduce(0) { $0 + $1.byteCount }
            let more = unconfirmed.notKept > 0 ? " and \(unconfirmed.notKept) more" : ""
            return "unconfirmed \(unconfirmed.messages.count) messages (\(bytes) bytes)\(more) "
                + "gen=\(unconfirmed.generation)"
        case .delivery(let delivery):
            return "delivery \(delivery)"
        case .record(let record):
            return record.logLine
        }
    }
}

extension LogRecord {
    /// One line, `key=value` pairs, with nothing but the record's own typed fields, then its attempt's timings
    /// (`resolve_ms=0 tcp=127.0.0.1:8080(connected,+0,1ms) upgrade_ms=1`, the names of `AttemptTimings.fields`).
    public var logLine: String {
        var line = "t=\(self.time) gen=\(self.generation) event=\(self.kind.rawValue) from=\(self.from) to=\(self.to)"
        for (name, value) in self.event.fields where name != "detail" {  // a detail has spaces: JSON only
            switch value {
            case .number(let number): line += " \(name)=\(number)"
            case .name(let text): line += " \(name)=\(text)"
            }
        }
        guard let timings = self.timings else { return line }
        for (name, value) in timings.fields {
            guard name == "tcp" else {
                line += " \(name)=\(value)"
                continue
            }
            let attempts = timings.tcp.map { "\($0.address)(\($0.outcome),+\($0.start),\($0.duration)ms)" }
            line += " tcp=" + attempts.joined(separator: ",")
        }
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
