/// One structured log line produced by the session machine (docs/ARCHITECTURE.md §8): when, on which generation,
/// the phase before and after, and what happened with the fields that belong to it.
///
/// ```swift
/// switch record.event {
/// case .pong(let rtt): metrics.record(roundTrip: rtt)
/// case .closed(let reason, let code): log("closed \(reason.name) \(code ?? 0)")
/// default: break
/// }
/// ```
///
/// No field can hold a payload, a header value or a token: only numbers, phases and reasons (whose only texts are
/// fixed phrases, such as an invalid handshake's detail, and the numeric addresses a failed connect tried, see
/// `ConnectAttempt`), and the one URL a redirect record names, redacted (scheme, host, port and path: never user
/// info, query or fragment).
public struct LogRecord: Equatable, Sendable {
    /// The transport generation the record is about (the latest one handed out for session-wide records; for a
    /// `.stale` record the ignored event's own).
    public var generation: Int
    /// Monotonic time in ms.
    public var time: Int
    public var from: SessionPhase
    public var to: SessionPhase
    /// What happened, with its own fields.
    public var event: Event
    /// How long each step of the attempt took: on the `.opened` record of an attempt, and on the `.closed` record
    /// of an attempt that ended before it opened (with the steps reached); nil on every other record, and where the
    /// transport does not measure (see `AttemptTimings`).
    public var timings: AttemptTimings? {
        get { self.boxedTimings?.timings }
        set { self.boxedTimings = newValue.map(TimingsBox.init) }
    }
    /// `timings`, in a box of its own: nil on all records but an attempt's first and last, and 121 bytes inline,
    /// where the other fields take 64. Every record is moved several times on its way to a reader (into the
    /// client's event buffer, out of it), and `WebSocketEvent` is as large as its largest case.
    private var boxedTimings: TimingsBox?

    public init(
        generation: Int, time: Int, from: SessionPhase, to: SessionPhase, event: Event,
        timings: AttemptTimings? = nil
    ) {
        self.generation = generation
        self.time = time
        self.from = from
        self.to = to
        self.event = event
        self.timings = timings
    }

    /// An attempt's timings, boxed (`LogRecord.boxedTimings`); compared by value.
    private final class TimingsBox: Equatable, Sendable {
        let timings: AttemptTimings

        init(_ timings: AttemptTimings) {
            self.timings = timings
        }

        static func == (left: TimingsBox, right: TimingsBox) -> Bool {
            left.timings == right.timings
        }
    }

    /// What a record says happened. Each case carries the fields that belong to it, and only those.
    public enum Event: Equatable, Sendable {
        /// An attempt starts. `attempt`: failed attempts since the last healthy connection.
        case connecting(attempt: Int)
        /// The server redirected the opening handshake with `status` (301, 302, 303, 307 or 308) and the attempt
        /// follows it to `location`: the URL redacted (scheme, host, port, path; no user info, query or fragment).
        /// One record per hop, all within the attempt's connect deadline.
        case redirected(status: Int, location: String)
        /// The transport opened; the greeting goes out before the session is reported open (`.opened` follows).
        case greeting
        case opened
        case ping
        /// `rtt`: the round trip in ms.
        case pong(rtt: Int)
        /// The pong is overdue, but a frame that was arriving when it fell due still arrives (or just completed):
        /// the pong may be queued behind it, so the connection is declared dead only if the pong has not come by
        /// `deadline` (ms), one timeout after the frame's latest byte (`SessionMachine.inboundProgressReported`).
        case pongDeadlineMoved(deadline: Int)
        /// A message was delivered; `bytes`: its payload size.
        case message(bytes: Int)
        /// A connection ended or was closed. `code`: the close code, or the HTTP status of a rejected handshake.
        case closed(reason: CloseReason, code: Int?)
        /// The session waits `delay` ms before attempt `attempt + 1`.
        case retryScheduled(attempt: Int, delay: Int)
        /// The retry policy stopped retrying after `attempt` failures counted; the session is `.failed`.
        case gaveUp(reason: CloseReason, attempt: Int)
        /// The user asked for an attempt now (`reconnectRequested`); a `.connecting` record follows.
        case reconnectRequested
        /// The network path changed to this state.
        case path(PathState)
        case background, foreground, stopped
        /// The client stopped reading its connection: the events not read yet are above the inbound high watermark.
        case readingHeld
        /// The consumer caught up (the low watermark): the client reads again.
        case readingResumed
        /// An event ignored because its generation was not current (one per `staleEvents`).
        case stale(ignored: Ignored)
        /// A step of a make-before-break handover (`InterfaceSwitchPolicy.makeBeforeBreak`), on the generation of
        /// the second transport; the session stays `.open` (its phases say so) unless the old connection ends first.
        case handover(HandoverStep)
    }

    /// The steps of a make-before-break handover, each recorded on the new connection's generation. The old
    /// connection's end is its own `.closed` record (reason `handed_over` when the handover closed it).
    public enum HandoverStep: String, Equatable, Sendable {
        /// The interfaces changed while open: a second connection opens on the new path.
        case opening
        /// It opened (and was greeted): `.now` sends and the outbox go to it from now on; the old one drains.
        case moved
        /// It failed before the move (its `.closed` record says why): the session stays on the old connection and
        /// probes it.
        case abandoned
        /// The old connection ended before the move: the new one is the session's connection attempt, as after a
        /// path-driven reconnect (phase `.connecting`).
        case oldEndedFirst = "old_ended_first"
    }

    /// The event's case without its fields, named as in `tether connect --events jsonl`: for filtering and logs.
    public enum Kind: String, Sendable {
        case connecting, redirected, greeting, opened, ping, pong, message, closed
        case pongDeadlineMoved = "pong_deadline_moved"
        case retryScheduled = "retry_scheduled"
        case gaveUp = "gave_up"
        case reconnectRequested = "reconnect_requested"
        case path, background, foreground, stopped
        case readingHeld = "reading_held"
        case readingResumed = "reading_resumed"
        case stale, handover
    }

    /// What a `.stale` record ignored.
    public enum Ignored: String, Equatable, Sendable {
        case opened, message, pong
        case pingFailed = "ping_failed"
        case ended, path, redirected
        case greetingSent = "greeting_sent"
    }

    /// The event's case, without its fields.
    public var kind: Kind {
        switch self.event {
        case .connecting: .connecting
        case .redirected: .redirected
        case .greeting: .greeting
        case .opened: .opened
        case .ping: .ping
        case .pong: .pong
        case .pongDeadlineMoved: .pongDeadlineMoved
        case .message: .message
        case .closed: .closed
        case .retryScheduled: .retryScheduled
        case .gaveUp: .gaveUp
        case .reconnectRequested: .reconnectRequested
        case .path: .path
        case .background: .background
        case .foreground: .foreground
        case .stopped: .stopped
        case .readingHeld: .readingHeld
        case .readingResumed: .readingResumed
        case .stale: .stale
        case .handover: .handover
        }
    }
}

extension LogRecord: CustomReflectable {
    /// The record's fields, `timings` as a field like the others (not its box): what `print(record)` and a
    /// debugger show.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "generation": self.generation, "time": self.time, "from": self.from, "to": self.to,
                "event": self.event, "timings": self.timings as Any,
            ],
            displayStyle: .struct)
    }
}
