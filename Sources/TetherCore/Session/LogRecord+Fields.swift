extension LogRecord.Event {
    /// A field's value: a number, or a name (a reason, a path state, what a stale record ignored, a fixed detail,
    /// a redirect's redacted URL). Prints as the number or the name alone, so that it can stand as a logger's
    /// metadata value.
    public enum FieldValue: Equatable, Sendable, CustomStringConvertible {
        case number(Int)
        case name(String)

        /// The number in decimal, or the name.
        public var description: String {
            switch self {
            case .number(let number): String(number)
            case .name(let name): name
            }
        }
    }

    /// The event's own fields, in a fixed order, with the names `tether connect --events jsonl` and `logLine` use:
    /// `reason`, `detail` (an invalid handshake's fixed text), `code`, `status` and `location` (of a redirect),
    /// `rtt_ms`, `deadline_ms`, `attempt`, `delay_ms`, `bytes`, `path`, `ignored`, `step` (of a handover), each where
    /// it belongs.
    public var fields: [(name: String, value: FieldValue)] {
        switch self {
        case .connecting(let attempt):
            [("attempt", .number(attempt))]
        case .redirected(let status, let location):
            [("status", .number(status)), ("location", .name(location))]
        case .pong(let rtt):
            [("rtt_ms", .number(rtt))]
        case .pongDeadlineMoved(let deadline):
            [("deadline_ms", .number(deadline))]
        case .message(let bytes):
            [("bytes", .number(bytes))]
        case .closed(let reason, let code):
            Self.fields(of: reason) + (code.map { [("code", .number($0))] } ?? [])
        case .retryScheduled(let attempt, let delay):
            [("attempt", .number(attempt)), ("delay_ms", .number(delay))]
        case .gaveUp(let reason, let attempt):
            Self.fields(of: reason) + [("attempt", .number(attempt))]
        case .path(let state):
            [("path", .name("\(state)"))]
        case .stale(let ignored):
            [("ignored", .name(ignored.rawValue))]
        case .handover(let step):
            [("step", .name(step.rawValue))]
        case .greeting, .opened, .ping, .reconnectRequested, .background, .foreground, .stopped, .readingHeld,
             .readingResumed:
            []
        }
    }

    private static func fields(of reason: CloseReason) -> [(name: String, value: FieldValue)] {
        [("reason", .name(reason.name))] + (reason.detail.map { [("detail", .name($0))] } ?? [])
    }
}
