import Tether
import TetherCore

extension LogRecord {
    /// The record as one JSON object with the keys of `tether connect --events jsonl`, in this order:
    /// `t`, `gen`, `event`, `from`, `to`, then, where they apply, `reason`, `detail`, `code`, `rtt_ms`, `attempt`,
    /// `delay_ms`, `bytes`, `path`, `ignored` (what a `stale` record ignored). A record has no field that could hold
    /// a payload, header value or URL query (`detail`, of a `handshake_invalid` close, is one of the handshake
    /// parser's fixed texts).
    package var json: JSONValue {
        var members: [(String, JSONValue)] = [
            ("t", .int(self.time)),
            ("gen", .int(self.generation)),
            ("event", .string(self.kind.rawValue)),
            ("from", .string(self.from.name)),
            ("to", .string(self.to.name)),
        ]
        for (name, value) in self.event.fields {
            switch value {
            case .number(let number): members.append((name, .int(number)))
            case .name(let text): members.append((name, .string(text)))
            }
        }
        return .object(members)
    }

    /// One line of `--events jsonl`.
    package var jsonLine: String { self.json.serialized() }
}

extension SessionPhase {
    /// The phase's stable name in events and reports.
    package var name: String {
        switch self {
        case .stopped: "stopped"
        case .connecting: "connecting"
        case .open: "open"
        case .waiting: "waiting"
        case .offline: "offline"
        case .suspended: "suspended"
        case .failed: "failed"
        }
    }
}

extension ConnectivityStatus {
    /// The status's stable name: `online`, `offline` (no network), `unknown`, or `server_unreachable:` and the
    /// outcome's name (for example `server_unreachable:timeout`).
    package var name: String {
        switch self {
        case .unknown: "unknown"
        case .online: "online"
        case .offline: "offline"
        case .serverUnreachable(let outcome): "server_unreachable:\(outcome.name)"
        }
    }
}

extension PathState {
    /// The path state's stable name in events and reports.
    package var name: String {
        switch self {
        case .unknown: "unknown"
        case .available: "available"
        case .needsConnection: "needsConnection"
        case .unavailable: "unavailable"
        }
    }
}
