/// One structured log line produced by the session machine (docs/ARCHITECTURE.md §8).
///
/// No field can hold a payload, a header value, a token or a URL: only numbers, phases and reasons (whose only
/// texts are fixed phrases, such as an invalid handshake's detail, and the numeric addresses a failed connect tried,
/// see `ConnectAttempt`).
public struct LogRecord: Equatable, Sendable {
    public enum Kind: String, Sendable {
        case connecting, opened, ping, pong, message, closed
        case retryScheduled = "retry_scheduled"
        case path, background, foreground, stopped
        /// The user asked for an attempt now (`reconnectRequested`); a `.connecting` record follows.
        case reconnectRequested = "reconnect_requested"
        /// The retry policy stopped retrying (`attempt`: the failures counted); the session is `.failed`.
        case gaveUp = "gave_up"
        /// The transport opened; the greeting goes out before the session is reported open (`.opened` follows).
        case greeting
        /// The client stopped reading its connection: the events not read yet are above the inbound high watermark.
        case readingHeld = "reading_held"
        /// The consumer caught up (the low watermark): the client reads again.
        case readingResumed = "reading_resumed"
        /// An event ignored because its generation was not current (`ignored` says which kind). Its `generation` is
        /// the event's own: a transport generation, or for a path update the monitor's. One per `staleEvents`.
        case stale
    }

    /// What a `.stale` record ignored.
    public enum Ignored: String, Equatable, Sendable {
        case opened, message, pong
        case pingFailed = "ping_failed"
        case ended, path
        case greetingSent = "greeting_sent"
    }

    /// The transport generation the record is about (the latest one handed out for session-wide records).
    public var generation: Int
    public var kind: Kind
    /// Monotonic time in ms.
    public var time: Int
    public var from: SessionPhase
    public var to: SessionPhase
    /// For `.closed`.
    public var reason: CloseReason?
    /// The close code, or the HTTP status of a rejected handshake.
    public var code: Int?
    /// For `.pong`: round-trip time in ms.
    public var rtt: Int?
    /// For `.connecting` and `.retryScheduled`: failed attempts since the last healthy connection.
    public var attempt: Int?
    /// For `.retryScheduled`: the wait in ms.
    public var delay: Int?
    /// For `.message`: the payload size in bytes.
    public var bytes: Int?
    /// For `.path`: the new path state.
    public var path: PathState?
    /// For `.stale`: the kind of event that was ignored.
    public var ignored: Ignored?

    public init(
        generation: Int, kind: Kind, time: Int, from: SessionPhase, to: SessionPhase,
        reason: CloseReason? = nil, code: Int? = nil, rtt: Int? = nil, attempt: Int? = nil,
        delay: Int? = nil, bytes: Int? = nil, path: PathState? = nil, ignored: Ignored? = nil
    ) {
        self.generation = generation
        self.kind = kind
        self.time = time
        self.from = from
        self.to = to
        self.reason = reason
        self.code = code
        self.rtt = rtt
        self.attempt = attempt
        self.delay = delay
        self.bytes = bytes
        self.path = path
        self.ignored = ignored
    }
}
