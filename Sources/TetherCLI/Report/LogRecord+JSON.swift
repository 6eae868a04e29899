import Tether
import TetherCore

extension LogRecord {
    /// The record as one JSON object with the keys of `tether connect --events jsonl`, in this order:
    /// `t`, `gen`, `event`, `from`, `to`, then, where they apply, `reason`, `detail`, `code`, `status`, `location`,
    /// `rtt_ms`, `attempt`, `delay_ms`, `bytes`, `path`, `ignored` (what a `stale` record ignored), and last
    /// `timings` on an attempt's `opened` or failure `closed` record (`AttemptTimings.json`). A record has no
    /// field that could hold a payload, header value or URL query (`detail` is a fixed text; `location`, a redirect's
    /// URL, has no user info, query or fragment).
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
        if let timings = self.timings { members.append(("timings", timings.json)) }
        return .object(members)
    }

    /// One line of `--events jsonl`.
    package var jsonLine: String { self.json.serialized() }
}

extension SessionPhase {
    /// The phase's stable name in events and reports: its case (`description`).
    package var name: String { self.description }
}

extension ConnectivityStatus {
    /// The status's stable name: `online`, `offline` (no network), `unknown`; when nothing answered in time,
    /// `server_unreachable:` and how (`server_unreachable:timeout`, `:unreachable`, `:connection_lost`); when the
    /// server answered but not as hoped, that answer, with its status or close code where it has one
    /// (`auth_failure`, `rejected:404`, `server_error:503`, `closed_by_server:1011`, `tls_failure`,
    /// `invalid_response`): a server that refuses the credentials is no unreachable server.
    package var name: String {
        switch self {
        case .unknown: "unknown"
        case .online: "online"
        case .offline: "offline"
        case .serverUnreachable(let outcome):
            switch outcome {
            case .timeout, .unreachable, .connectionLost, .success: "server_unreachable:\(outcome.name)"
            case .serverError(let status), .rejected(let status): "\(outcome.name):\(status)"
            case .closedByServer(let code?): "\(outcome.name):\(code)"
            case .authFailure, .closedByServer(nil), .invalidResponse, .tlsFailure: outcome.name
            }
        }
    }
}

extension PathState {
    /// The path state's stable name in events and reports: its case (`description`).
    package var name: String { self.description }
}

extension AttemptTimings {
    /// The timings as one JSON object, the steps in the order they happen, each where the attempt took it:
    /// `resolve`, `tcp` (an array: `address`, `family`, `start_ms`, `duration_ms`, `outcome`), `proxy`, `tls` (with
    /// `handshake`: `full` or `resumed`, once known), `upgrade`, `greeting`; a step is `start_ms` and `duration_ms`
    /// (from the attempt's start), and `finished: false` when the attempt ended during it.
    package var json: JSONValue {
        func step(_ step: Step, _ extra: [(String, JSONValue)] = []) -> JSONValue {
            var members: [(String, JSONValue)] = [("start_ms", .int(step.start)), ("duration_ms", .int(step.duration))]
            if !step.finished { members.append(("finished", .bool(false))) }
            return .object(members + extra)
        }
        var members: [(String, JSONValue)] = []
        if let resolve = self.resolve { members.append(("resolve", step(resolve))) }
        if !self.tcp.isEmpty {
            members.append(("tcp", .array(self.tcp.map { attempt in
                .object([
                    ("address", .string(attempt.address)), ("family", .string(attempt.family)),
                    ("start_ms", .int(attempt.start)), ("duration_ms", .int(attempt.duration)),
                    ("outcome", .string(attempt.outcome.description)),
                ])
            })))
        }
        if let proxy = self.proxy { members.append(("proxy", step(proxy))) }
        if let tls = self.tls {
            members.append(("tls", step(tls, self.tlsHandshake.map { [("handshake", .string($0.rawValue))] } ?? [])))
        }
        if let upgrade = self.upgrade { members.append(("upgrade", step(upgrade))) }
        if let greeting = self.greeting { members.append(("greeting", step(greeting))) }
        return .object(members)
    }
}
