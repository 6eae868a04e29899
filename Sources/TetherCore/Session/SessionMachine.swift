/// The session state machine: heartbeat, backoff, path hint, app lifecycle and the user's intent in one pure value.
///
/// Events in, one `SessionAction` out; time is integer milliseconds passed in, randomness (backoff jitter) is
/// injected. The driver runs the action, drains the log records, and sleeps until `nextWake` (nil: no timer).
///
/// Generations. Only `.openTransport` hands out a generation (strictly increasing). The session's generation is
/// *live* while its transport exists; once the machine orders its close or the transport reports its end, it is
/// dead. An event naming a dead or older generation changes nothing but `staleEvents` (and leaves a `.stale` record
/// naming what was ignored). Two exceptions for the session's generation after the machine ordered its close: its
/// end is expected (not stale), and its messages are still delivered until that end. Each generation gets at
/// most one `.closeTransport`. A make-before-break handover adds one second transport beside the session's, with
/// its own generation and the same rules (`SessionMachine+Handover`); without one, no action names a generation
/// other than the session's.
///
/// Delivery. `messageReceived` decides: every message read from the latest generation's transport before its end
/// is delivered, whatever the phase (connecting, open, suspended with the transport kept in the background, or
/// during the closing handshake after a stop or a timeout); a message from an older generation, or after the
/// end, is discarded, counted and recorded.
///
/// Its decisions (the reasons are in docs/ARCHITECTURE.md §4 and §5):
/// - Attempts (`attempts`) count consecutive failures. They reset when a connection proves healthy (its first
///   accepted pong, or `stablePeriod` ms open; the latter is evaluated when the connection ends, so it needs no
///   timer of its own), on `start`, on foreground, and when the path returns. Never on open.
/// - Retry: peer close 1003 or 1008, HTTP 3xx (a redirect the transport did not follow: redirects off, or a status
///   other than 301, 302, 303, 307, 308) and 4xx other than 408 and 429, a redirect that could not be followed
///   (`redirectFailed`: a loop, too many, a downgrade to `ws://`, a bad `Location`), `connectFailed(.unsupported)`,
///   a proxy's refusal by the same status rules as a handshake's, and a permanent `tlsFailed` (the certificate does
///   not verify) fail for good
///   (`.failed`, `failure` set). Close 1012/1013 and HTTP 429/503 wait
///   `max(backoff, min(Retry-After, maximumRetryAfter) ?? retryLaterDelay)`: Retry-After is honoured even above the
///   backoff cap, never beyond `maximumRetryAfter` (docs/ARCHITECTURE.md §10: every delay from the peer is capped,
///   here, in one place for every transport). Everything else (other close codes, 5xx, 408, connect errors,
///   broken connections, invalid handshakes, protocol violations) retries with backoff.
/// - A failed liveness probe (`probeTimeout`, or `pingFailed` of a probe) reconnects at once without counting an
///   attempt: the network changed or the app slept, the server did nothing wrong.
/// - While the path is `unavailable` no automatic attempt is started and none is counted: a connection that ends
///   goes to `.offline`. The user's own attempts (`start`, `reconnectRequested`) always go out. An open or
///   connecting transport is not closed for it (the hint never blocks). When the path leaves `unavailable` (or
///   interfaces change) while offline or waiting, `.openTransport` goes out at once.
/// - Close codes the machine sends: 1000 for `stop`; 1001 (going away) for background, pong/probe/connect timeouts
///   and ping failures (the endpoint is leaving this connection, not reporting a protocol error).
/// - While the transport stays open in the background (`.keepAndProbe`) the phase is `.suspended`, the heartbeat is
///   paused (its outstanding ping abandoned), and on foreground a fresh probe decides. A connection attempt in
///   progress is closed on background under both policies. A transport that ends in the background is reconnected
///   on foreground, not before.
///
/// Not generic: a client in another module runs the machine's code as compiled here, and a generic machine would
/// run there unspecialized, looking up its nested types' metadata at run time on every event (docs/benchmarks.md,
/// issue 40). The generator is kept behind an existential, used only for a backoff's jitter.
public struct SessionMachine: Sendable {
    /// How a failed connection continues.
    enum Retry: Equatable {
        case never
        case backoff
        case throttled(retryAfter: Int?)
        case immediately
    }

    /// An open transport of the session: its generation, since when it is open, whether it proved healthy (a pong
    /// answered, or `stablePeriod` open), and its own heartbeat.
    struct OpenConnection: Equatable, Sendable {
        var generation: Int
        var since: Int
        var healthy: Bool
        var heartbeat: PingSchedule
    }

    /// The stage in which the transport of `generation` is live (opening, greeting or open). Each live connection
    /// holds what only it has (its deadline, its heartbeat); the generation they name is the session's.
    enum Live: Equatable, Sendable {
        /// A transport is opening (`greeting: false`), or open and sending the greeting (`.sendGreeting`; the
        /// session is reported open only once it is out, `greetingSent`), within the connect deadline.
        case connecting(deadline: Int, greeting: Bool)
        case open(OpenConnection)
        /// Suspended in the background with the open transport kept (`.keepAndProbe`), its heartbeat paused; a
        /// probe decides on foreground.
        case kept(OpenConnection)
    }

    /// What a session without a live transport does.
    enum Idle: Equatable, Sendable {
        /// Not started, or stopped by the user.
        case stopped(inBackground: Bool)
        case waiting(retryAt: Int)
        case offline
        /// In the background: its transport was closed on entering it, or ended before or since; the session
        /// reconnects on foreground.
        case suspended
        case failed(CloseReason, inBackground: Bool)
    }

    /// The phase with the data only it has. Whether the app is in the background is part of it: a started session
    /// in the background is always suspended (`.live(.kept)` or `.idle(.suspended)`), and connecting, open,
    /// waiting and offline exist only in the foreground.
    enum Stage: Equatable, Sendable {
        /// The transport of `generation` is live.
        case live(Live)
        /// None is live. `closing`: the machine ordered the close of the transport of `generation` and it has not
        /// reported its end yet (no longer live: its opens, pongs and ping failures are stale, but what it still
        /// reads is delivered, and its end is expected).
        case idle(Idle, closing: Bool)

        var phase: SessionPhase {
            switch self {
            case .live(.connecting): .connecting
            case .live(.open): .open
            case .live(.kept), .idle(.suspended, _): .suspended
            case .idle(.stopped, _): .stopped
            case .idle(.waiting, _): .waiting
            case .idle(.offline, _): .offline
            case .idle(.failed, _): .failed
            }
        }

        var inBackground: Bool {
            switch self {
            case .idle(.stopped(let inBackground), _), .idle(.failed(_, let inBackground), _): inBackground
            case .live(.connecting), .live(.open), .idle(.waiting, _), .idle(.offline, _): false
            case .live(.kept), .idle(.suspended, _): true
            }
        }

        /// The open transport, in `.open` or kept in the background.
        var connection: OpenConnection? {
            switch self {
            case .live(.open(let connection)), .live(.kept(let connection)): connection
            case .live(.connecting), .idle: nil
            }
        }

        /// Changes the open transport (in `.open`, or kept in the background); nothing without one.
        mutating func updateConnection<Result>(_ body: (inout OpenConnection) -> Result?) -> Result? {
            switch self {
            case .live(.open(var connection)):
                let result = body(&connection)
                self = .live(.open(connection))
                return result
            case .live(.kept(var connection)):
                let result = body(&connection)
                self = .live(.kept(connection))
                return result
            case .live(.connecting), .idle:
                return nil
            }
        }

        /// The same stage once the transport the machine closed reported its end; nil when none is being closed.
        var closeEnded: Stage? {
            guard case .idle(let idle, closing: true) = self else { return nil }
            return .idle(idle, closing: false)
        }

        /// The transport of `generation` as the stage holds it.
        var link: Link {
            switch self {
            case .live(.connecting(let deadline, greeting: false)): .connecting(deadline: deadline)
            case .live(.connecting(let deadline, greeting: true)): .greeting(deadline: deadline)
            case .live(.open(let connection)), .live(.kept(let connection)):
                .open(since: connection.since, healthy: connection.healthy)
            case .idle(_, let closing): closing ? .closing : .none
            }
        }
    }

    /// The transport, if any, of `generation`, read from the stage (`Stage.link`).
    enum Link: Equatable, Sendable {
        /// None was made yet, or it reported its end.
        case none
        /// Live: opening, within the machine's connect deadline.
        case connecting(deadline: Int)
        /// Live: open, sending the greeting, still within the connect deadline.
        case greeting(deadline: Int)
        /// Live: open; healthy once it answered a pong or stayed open for `stablePeriod`.
        case open(since: Int, healthy: Bool)
        /// The machine ordered its close and it has not reported its end yet.
        case closing
    }

    /// Everything that decides behaviour (all but the generator and the log records); `Equatable` so tests can
    /// check that a stale event changed nothing.
    struct State: Equatable, Sendable {
        var stage = Stage.idle(.stopped(inBackground: false), closing: false)
        /// The session's generation (0 before the first): the transport the stage names, live or closing. The
        /// latest `.openTransport`, or the connection a make-before-break handover moved to.
        var generation = 0
        /// The latest generation handed out by `.openTransport` (the session's, or a handover's second transport).
        var issued = 0
        /// A make-before-break handover's second transport beside the session's (`InterfaceSwitchPolicy`).
        var side: Side?
        /// Transports of earlier handovers that the machine closed and that a later switch replaced as the side
        /// before their end: what they read is delivered and their end is expected, as for a `.closing` side. Each
        /// leaves at its end, which every transport reports within its close timeout.
        var closedSides: [Int] = []
        /// The request id of the latest ping sent, strictly increasing across connections.
        var lastPingID: UInt64 = 0
        /// True while the consumer is behind (`consumerBacklogChanged`): every transport is held, and no heartbeat
        /// sends a ping or runs a deadline. About the consumer, so it holds across connections.
        var readingHeld = false
        var backoff: Backoff
        var phase: SessionPhase { self.stage.phase }
        var link: Link { self.stage.link }
        var background: Bool { self.stage.inBackground }
        var retryAt: Int? {
            guard case .idle(.waiting(let retryAt), _) = self.stage else { return nil }
            return retryAt
        }
        var failure: CloseReason? {
            guard case .idle(.failed(let reason, _), _) = self.stage else { return nil }
            return reason
        }
        /// The path hint and the latest request outcome (opens and pongs succeed; ends and timeouts fail), apart.
        var connectivity = Connectivity()
        var hint: NetworkHint { self.connectivity.hint }
        var lastRTT: Int?
        /// When the current run of counted failures began (nil while none has failed since the last reset).
        var failingSince: Int?
        var staleEvents = 0
        /// The close the driver waits to see sent before the app is suspended (`enteredBackground`), until `deadline`.
        var closeWait: CloseWait?
        /// The latest report of the current path monitor, to tell an interface switch (`pathReported`).
        var lastPathReport: PathReport?
        /// Why the session's latest connection or attempt ended (its `closed` record's reason), since `start`.
        var lastEnd: CloseReason?
        /// The attempt in progress is the one a 401 or 403 asked for with a fresh request (`askedAgain(after:)`).
        var askedAgain = false
        /// The outbox, the `.now` sends parked behind it and the write in flight: the session's, across connections.
        var outgoing: OutboxWriter
        /// What each feed stream delivered (`SessionMachine+Feeds`).
        var feeds: FeedLedger
        /// The generation the outbox and `.now` sends write to: the open one, if the session is open.
        var writeGeneration: Int? {
            guard case .live(.open(let connection)) = self.stage else { return nil }
            return connection.generation
        }
    }

    /// The second transport of a make-before-break handover, beside the session's own (see
    /// `SessionMachine+Handover`). Its generation is never the session's: its events are the handover's.
    enum Side: Equatable, Sendable {
        /// Opening on the new path (`greeting`: open, sending the greeting) until `deadline`; the session writes to
        /// its own connection meanwhile.
        case opening(generation: Int, deadline: Int, greeting: Bool)
        /// The session's previous connection, after the session moved to the new one: closed with 1001 at
        /// `until`. What it reads is delivered.
        case draining(generation: Int, until: Int)
        /// Closed by the machine, its end not reported yet: what it reads is delivered, its end is expected.
        case closing(generation: Int)

        var generation: Int {
            switch self {
            case .opening(let generation, _, _), .draining(let generation, _), .closing(let generation): generation
            }
        }

        var wake: Int? {
            switch self {
            case .opening(_, let deadline, _): deadline
            case .draining(_, let until): until
            case .closing: nil
            }
        }
    }

    struct CloseWait: Equatable, Sendable {
        var generation: Int
        var deadline: Int
    }

    static var normalClosure: UInt16 { 1000 }
    static var goingAway: UInt16 { 1001 }

    /// The configuration the machine was created with.
    public let configuration: SessionConfiguration
    /// Its durations in milliseconds, converted once.
    let timing: SessionTiming
    private var random: any RandomNumberGenerator & Sendable
    var state: State
    private var records: LogRecordBuffer
    /// The reason of the latest close since the last published status (`statusChange()`).
    var cause: CloseReason?
    /// The status last returned by `statusChange()` (its `lastRTT` may be older than the latest: a new round trip
    /// alone is no change, and is not stored).
    var publishedStatus: SessionStatus
    /// The round trip of the pong accepted since the last `roundTripToPublish()`, if any.
    var unpublishedRoundTrip: Int?
    /// What the outbox child reported since the last drain (`drainOutboxNotices`).
    var outboxNotices = MachineNotices()
    /// The close wait of `enteredBackground` ended since the last `closeWaitEnded()`.
    var closeWaitOver = false
    /// Actions of the latest event after the one it returned, in order (`followUp()`): only a handover's events
    /// have more than one (two transports to close, or one to close and one to probe).
    var followUps: [SessionAction] = []
    /// The timings the connecting transport reported, until its `.opened` or `.closed` record carries them
    /// (`SessionMachine+Timings`).
    var attemptTimings: PendingTimings?

    /// - Parameters:
    ///   - configuration: timing and policies (default `SessionConfiguration()`), every setting in range: one out
    ///     of range (`settingOutOfRange`) is a programming error and traps.
    ///   - random: the generator for backoff jitter (`SystemRandomNumberGenerator()` in production, a seeded
    ///     `SplitMix64` in tests).
    ///   - recordCapacity: log records kept between drains (default 64; an event produces at most three). When
    ///     full, the oldest is dropped and counted in `droppedRecords`.
    public init(
        configuration: SessionConfiguration = .init(), random: some RandomNumberGenerator & Sendable,
        recordCapacity: Int = 64
    ) {
        if let problem = configuration.settingOutOfRange {
            preconditionFailure(
                "SessionConfiguration.\(problem.setting) is \(problem.value): it must be \(problem.requirement)")
        }
        self.configuration = configuration
        self.timing = SessionTiming(configuration)
        self.random = random
        self.state = State(
            backoff: Backoff(policy: configuration.backoff),
            outgoing: OutboxWriter(
                limits: configuration.outboxLimits, maximumWrites: configuration.delivery.maximumWrites),
            feeds: FeedLedger(
                limits: configuration.delivery.feedLimits, positions: configuration.delivery.feedPositions)
        )
        self.records = LogRecordBuffer(capacity: recordCapacity)
        self.publishedStatus = SessionStatus(
            phase: .stopped, generation: 0, attempts: 0, retryAt: nil, failure: nil, lastRTT: nil, path: .unknown)
        self.publishedStatus = self.status  // the initial status, which the driver shows before any event
    }

    public var phase: SessionPhase { self.state.phase }
    /// The session's generation: its latest `.openTransport`, or the connection a make-before-break handover moved
    /// to (0 before the first). A handover's second transport has a generation of its own before the move.
    public var generation: Int { self.state.generation }
    /// Failed attempts since the last healthy connection.
    public var attempts: Int { self.state.backoff.attempts }
    /// The earliest time at which `timerFired` can act; nil when no timer is needed.
    public var nextWake: Int? {
        let wake = Self.earliest(self.stageWake, self.state.outgoing.nextExpiry)
        return Self.earliest(Self.earliest(wake, self.state.closeWait?.deadline), self.state.side?.wake)
    }

    /// The stage's own wake: its deadline, the heartbeat, or the end of a wait.
    private var stageWake: Int? {
        switch self.state.stage {
        case .live(.connecting(let deadline, _)):
            return deadline
        case .live(.open(let connection)):
            return connection.heartbeat.nextWake(readingHeld: self.state.readingHeld)
        case .idle(.waiting(let retryAt), _):
            return retryAt
        case .live(.kept), .idle(.stopped, _), .idle(.offline, _), .idle(.suspended, _), .idle(.failed, _):
            return nil
        }
    }
    /// When the next attempt starts, while `.waiting`.
    public var retryAt: Int? { self.state.retryAt }
    /// Why the session gave up, while `.failed`.
    public var failure: CloseReason? { self.state.failure }
    /// The latest path hint.
    public var hint: NetworkHint { self.state.hint }
    /// What a banner shows: online while the latest request (open, pong) succeeded — also when the path monitor
    /// says unavailable, since a real request proved it wrong —, otherwise offline while the path is unavailable,
    /// otherwise the latest failure as `serverUnreachable(outcome)`, or unknown before any outcome.
    public var connectivity: ConnectivityStatus {
        let outcome = self.state.connectivity.lastOutcome
        if self.state.stage.connection != nil, outcome == .success { return .online }
        if self.state.hint.state == .unavailable { return .offline }
        switch outcome {
        case nil: return .unknown
        case .success?: return .online
        case let failure?: return .serverUnreachable(failure)
        }
    }
    /// The latest request outcome of the session (its opens, pongs, failed attempts and broken connections).
    public var lastOutcome: RequestOutcome? { self.state.connectivity.lastOutcome }
    /// The round-trip time of the latest accepted pong, in ms.
    public var lastRTT: Int? { self.state.lastRTT }
    /// Events ignored because their generation (transport or path monitor) was not current.
    public var staleEvents: Int { self.state.staleEvents }
    /// Log records overwritten because they were not drained in time.
    public var droppedRecords: Int { self.records.dropped }
    /// The request id of the latest ping sent.
    public var lastPingID: UInt64 { self.state.lastPingID }
    /// True while the app is in the background.
    public var inBackground: Bool { self.state.stage.inBackground }

    // MARK: - User intent

    /// The user wants a connection. From `.stopped` or `.failed`: attempts reset, then `.openTransport` whatever the
    /// path says (the hint never blocks a user's request; if the attempt fails while the path is unavailable, the
    /// session goes `.offline` without counting it), or `.suspended` in the background. Otherwise already
    /// started: `.none`.
    public mutating func start(now: Int) -> SessionAction {
        let from = self.state.phase
        switch self.state.stage {
        case .idle(.stopped(let inBackground), let closing), .idle(.failed(_, let inBackground), let closing):
            self.resetAttempts()
            self.state.lastEnd = nil
            if inBackground {
                self.state.stage = .idle(.suspended, closing: closing)
                self.record(.background, now: now, from: from)
                return .none
            }
            return self.openTransport(now: now, from: from)
        case .live, .idle(.waiting, _), .idle(.offline, _), .idle(.suspended, _):
            return .none  // already started
        }
    }

    /// The user asked for an attempt now (a "retry" button): from `.waiting`, `.offline` or `.failed`,
    /// `.openTransport` at once, whatever the path says — the hint informs, it never blocks a user's request. It
    /// counts no attempt of its own: from `.waiting` the failure that led there is already counted; from
    /// `.offline`, an attempt that fails while the path is still unavailable goes back `.offline` uncounted; a
    /// failed session starts over (attempts reset, as `start`). Elsewhere `.none`: already connecting or open,
    /// stopped (`start` is the way back), or suspended in the background (the foreground decides).
    public mutating func reconnectRequested(now: Int) -> SessionAction {
        let from = self.state.phase
        switch self.state.stage {
        case .idle(.waiting, _), .idle(.offline, _):
            self.record(.reconnectRequested, now: now, from: from)
            return self.openTransport(now: now, from: from)
        case .idle(.failed(_, inBackground: false), _):
            self.resetAttempts()
            self.record(.reconnectRequested, now: now, from: from)
            return self.openTransport(now: now, from: from)
        case .live(.kept), .idle(.suspended, _), .idle(.failed(_, inBackground: true), _):
            return .none  // in the background: the foreground decides
        case .idle(.stopped, _), .live(.connecting), .live(.open):
            return .none  // nothing to retry: stopped, already trying, or open
        }
    }

    /// The user wants no connection: closes the transport (1000, `.userStopped`) if one exists; phase `.stopped`.
    public mutating func stop(now: Int) -> SessionAction {
        let from = self.state.phase
        let inBackground = self.state.stage.inBackground
        self.state.outgoing.dropAll(now: now, notices: &self.outboxNotices)
        self.state.outgoing.leftOpen(notices: &self.outboxNotices)
        switch self.state.stage {
        case .idle(.stopped, _):
            return .none
        case .idle(.waiting, let closing), .idle(.offline, let closing), .idle(.suspended, let closing),
             .idle(.failed, let closing):
            self.state.stage = .idle(.stopped(inBackground: inBackground), closing: closing)
            self.record(.stopped, now: now, from: from)
            return .none
        case .live:
            let side = self.closeSideForGood(reason: .userStopped, code: Self.normalClosure, now: now)
            let generation = self.state.generation
            self.record(.closed(reason: .userStopped, code: Int(Self.normalClosure)), now: now, from: from, to: .stopped)
            self.state.stage = .idle(.stopped(inBackground: inBackground), closing: true)
            self.record(.stopped, now: now, from: from)
            return self.both(
                .closeTransport(generation: generation, reason: .userStopped, code: Self.normalClosure), side)
        }
    }

    // MARK: - Transport events

    /// The transport of `generation` finished its opening handshake. A second report is ignored. With a greeting
    /// (`SessionConfiguration.greets`): `.sendGreeting`, and the session stays `.connecting` (within the connect
    /// deadline) until `greetingSent`; without one it is open at once.
    public mutating func transportOpened(generation: Int, now: Int) -> SessionAction {
        if let action = self.sideOpened(generation: generation, now: now) { return action }
        guard self.isLive(generation) else { return self.stale(.opened, generation: generation, now: now) }
        guard case .live(.connecting(let deadline, greeting: false)) = self.state.stage else {
            return .none  // race: a duplicate "opened" for a transport already open
        }
        guard !self.configuration.greets else {
            self.state.stage = .live(.connecting(deadline: deadline, greeting: true))
            self.attemptTimings?.greetingStarted(generation: generation, now: now)
            self.record(.greeting, now: now, from: self.state.phase)
            return .sendGreeting(generation: generation)
        }
        return self.opened(now: now)
    }

    /// The transport of `generation`, still connecting, follows a redirect of its opening handshake (`status`) to
    /// `location`, the new URL as logs may show it (redacted: no user info, query or fragment). Recorded as
    /// `.redirected`; nothing else changes: the hops share the attempt's connect deadline, and a redirect that
    /// cannot be followed ends the attempt (`transportEnded` with `.redirectFailed`). From any other generation:
    /// stale.
    public mutating func transportRedirected(generation: Int, status: Int, location: String, now: Int) {
        let event = LogRecord.Event.redirected(status: status, location: location)
        if case .opening(generation, _, greeting: false)? = self.state.side {
            self.record(event, now: now, from: self.state.phase, generation: generation)  // a handover's new path
            return
        }
        guard case .live(.connecting(_, greeting: false)) = self.state.stage, generation == self.state.generation
        else {
            _ = self.stale(.redirected, generation: generation, now: now)
            return
        }
        self.record(event, now: now, from: self.state.phase)
    }

    /// The greeting of `generation` was handed to its transport, every message of it: the session is open (the
    /// heartbeat starts now, and the consumer may send). A report without a greeting in progress is ignored.
    public mutating func greetingSent(generation: Int, now: Int) -> SessionAction {
        if let action = self.sideGreetingSent(generation: generation, now: now) { return action }
        guard self.isLive(generation) else { return self.stale(.greetingSent, generation: generation, now: now) }
        guard case .live(.connecting(_, greeting: true)) = self.state.stage else {
            return .none  // race: a duplicate report
        }
        return self.opened(now: now)
    }

    private mutating func opened(now: Int) -> SessionAction {
        let from = self.state.phase
        self.state.connectivity.recordOutcome(.success)
        self.state.stage = .live(.open(self.newConnection(self.state.generation, now: now)))
        self.record(.opened, now: now, from: from)
        return self.nextWrite(now: now)  // the outbox first
    }

    /// The single terminal event of the transport of `generation`. Decides fail, back off, go offline or suspend;
    /// acknowledged sends waiting on it go back into the outbox (`SessionMachine+Acknowledgements`).
    public mutating func transportEnded(generation: Int, end: TransportEnd, now: Int) -> SessionAction {
        self.connectionOver(generation, then: self.settleEnd(generation: generation, end: end, now: now), now: now)
    }

    private mutating func settleEnd(generation: Int, end: TransportEnd, now: Int) -> SessionAction {
        self.endCloseWait(of: generation)  // nothing more of it will be sent
        if let action = self.sideEnded(generation: generation, end: end, now: now) { return action }
        if generation == self.state.generation, let ended = self.state.stage.closeEnded {
            self.state.stage = ended  // the end of the close the machine ordered: from now on nothing is delivered
            self.orderedCloseEnded(generation: generation, end: end)
            return .none
        }
        guard self.isLive(generation) else { return self.stale(.ended, generation: generation, now: now) }
        if let action = self.askAgain(after: end, now: now) { return action }
        let code = Self.code(of: end)
        if let action = self.sessionLeftBeforeTheMove(
            reason: CloseReason(end), code: code, outcome: RequestOutcome(end), closed: false, now: now) {
            return action
        }
        let from = self.state.phase
        self.connectionLeft(outcome: RequestOutcome(end), now: now)
        self.settle(
            reason: CloseReason(end), code: code, retry: Self.retry(after: end), closing: false, now: now, from: from)
        return self.closeDrainingSide(now: now)
    }

    /// The pong for ping `ping` of `generation`. Counts only for the outstanding ping before its deadline; the
    /// first accepted pong of a connection proves it healthy (attempts reset).
    public mutating func pongReceived(generation: Int, ping: UInt64, now: Int) -> SessionAction {
        guard !self.isSide(generation) else { return .none }  // no ping goes out on the side
        guard self.isLive(generation) else { return self.stale(.pong, generation: generation, now: now) }
        let accepted = self.state.stage.updateConnection { connection -> (rtt: Int, proved: Bool)? in
            guard let rtt = connection.heartbeat.pong(ping: ping, now: now) else { return nil }
            defer { connection.healthy = true }
            return (rtt, !connection.healthy)
        }
        guard let (rtt, proved) = accepted else {
            return .none  // race: duplicate completion, a pong for an older ping, or a late pong
        }
        self.state.lastRTT = rtt
        self.unpublishedRoundTrip = rtt
        self.outboxNotices.append(.provedAlive(generation: generation, ping: ping))
        self.state.connectivity.recordOutcome(.success)
        if proved {
            self.resetAttempts()
        }
        self.recordHeartbeat(.pong(rtt: rtt), now: now, from: self.state.phase)
        return self.nextWrite(now: now)  // a probe's pong: the outbox waited for it
    }

    /// Sending ping `ping` of `generation` failed. Closes (1001, `.pingFailed`) when it is the outstanding ping;
    /// a failure reported for a ping already settled (a second completion) is ignored.
    public mutating func pingFailed(generation: Int, ping: UInt64, now: Int) -> SessionAction {
        guard !self.isSide(generation) else { return .none }  // no ping goes out on the side
        guard self.isLive(generation) else { return self.stale(.pingFailed, generation: generation, now: now) }
        guard let outstanding = self.state.stage.connection?.heartbeat.outstanding, outstanding.id == ping else {
            return .none  // race: the ping was already answered, timed out or abandoned
        }
        let retry: Retry = outstanding.probe ? .immediately : .backoff
        return self.close(reason: .pingFailed, retry: retry, now: now)
    }

    /// The generation whose incoming bytes decide a pong deadline that has come at `now`: the driver asks its
    /// transport what it has received (`TransportConnection.inboundProgress()`) and reports it with
    /// `inboundProgressReported` before `timerFired(now:)`. Nil when no pong is overdue at `now` (the open
    /// connection has no ping outstanding, its deadline is later, or the heartbeat is paused or held): then there is
    /// nothing to ask, which is every timer firing of an idle, healthy connection.
    public func inboundProgressWanted(now: Int) -> Int? {
        guard case .live(.open(let connection)) = self.state.stage, !self.state.readingHeld,
              !connection.heartbeat.paused, let ping = connection.heartbeat.outstanding, now >= ping.deadline
        else {
            return nil
        }
        return connection.generation
    }

    /// What the transport of `generation` has received, as it reported at `now` (see `InboundProgress`): when the
    /// pong is overdue and a frame that was arriving when it fell due is still arriving, the pong may be queued
    /// behind it, and the dead-link verdict waits until one heartbeat timeout (or probe timeout) after that frame's
    /// latest byte, and again as long as its bytes keep arriving; once it is whole, until one timeout after its last
    /// byte. Nothing else moves the deadline: a link on which nothing arrived for the timeout, whole messages
    /// (the peer could have put the pong between them), or a frame that started after the first is dead as
    /// before. Recorded as `.pongDeadlineMoved`. A report for another generation, or while no pong is overdue,
    /// changes nothing. The verdict itself is `timerFired`'s, at the deadline (`nextWake`).
    public mutating func inboundProgressReported(generation: Int, _ progress: InboundProgress, now: Int) {
        guard case .live(.open(var connection)) = self.state.stage, connection.generation == generation,
              !self.state.readingHeld
        else {
            return  // race: the connection is no longer the open one, or reading is held (no deadline runs)
        }
        guard let deadline = connection.heartbeat.explainDelay(progress.arrival(now: now), now: now) else { return }
        self.state.stage = .live(.open(connection))
        self.record(.pongDeadlineMoved(deadline: deadline), now: now, from: .open)
    }

    /// The consumer of the delivered messages fell behind (`held`: the events not read yet are above the inbound
    /// high watermark) or caught up (the low watermark). Held: `.holdReading(true)` (stop reading every transport,
    /// so that the backlog stays bounded), and the heartbeat pauses its deadline, since a pong may be sitting unread
    /// (see `Heartbeat.holdReading()`); caught up: `.holdReading(false)`, and an outstanding ping gets a full timeout
    /// from now. A repeated report does nothing. A transport opened while held starts held (`.openTransport`'s
    /// `held`).
    public mutating func consumerBacklogChanged(held: Bool, now: Int) -> SessionAction {
        guard held != self.state.readingHeld else { return .none }
        self.state.readingHeld = held
        if !held {
            _ = self.state.stage.updateConnection { $0.heartbeat.resumeReading(now: now) }
        }
        self.record(held ? .readingHeld : .readingResumed, now: now, from: self.phase)
        return .holdReading(held)
    }

    /// Whether transports are held (`consumerBacklogChanged`); a new one starts held (`.openTransport`'s `held`).
    public var readingHeld: Bool { self.state.readingHeld }

    /// The greeting of `generation` could not be written: its transport is failing. Closed (1001,
    /// `.receiveFailed`: a write error is a broken connection) and retried with backoff, at once rather than at the
    /// connect deadline. Ignored when the greeting is not in progress on that generation.
    public mutating func greetingFailed(generation: Int, now: Int) -> SessionAction {
        if let action = self.sideGreetingFailed(generation: generation, now: now) { return action }
        guard self.isLive(generation) else { return self.stale(.greetingSent, generation: generation, now: now) }
        guard case .live(.connecting(_, greeting: true)) = self.state.stage else {
            return .none  // race: the transport's end settled it first
        }
        return self.close(reason: .receiveFailed, retry: .backoff, now: now)
    }

    /// The event stream of `generation`'s transport finished. After its end (reported, or the one the machine
    /// closed) that is expected; a live transport whose stream finished without an end broke: as `.receiveFailed`.
    public mutating func transportEventsFinished(generation: Int, now: Int) -> SessionAction {
        self.connectionOver(generation, then: self.eventsFinished(generation: generation, now: now), now: now)
    }

    private mutating func eventsFinished(generation: Int, now: Int) -> SessionAction {
        if self.isSide(generation) {
            // The side's stream finishing is its end: expected when closing, a break otherwise.
            return self.transportEnded(generation: generation, end: .receiveFailed, now: now)
        }
        guard generation == self.state.generation else { return .none }  // an older one: settled already
        if let ended = self.state.stage.closeEnded {
            self.state.stage = ended  // the close the machine ordered: its stream finishing is its end
            self.endCloseWait(of: generation)
            return .none
        }
        guard self.isLive(generation) else { return .none }  // its end was reported before
        return self.transportEnded(generation: generation, end: .receiveFailed, now: now)
    }

    /// The close frame of `generation` was handed to the kernel or the platform: the wait of `enteredBackground`
    /// is over (`closeWaitEnded()`).
    public mutating func closeSent(generation: Int, now: Int) -> SessionAction {
        self.endCloseWait(of: generation)
        return .none
    }

    /// True once after the wait that `enteredBackground` started (its `.closeTransport(…, reportSent: true)`)
    /// ended: the close frame was sent (`closeSent`), its transport ended, the app returned (`enteredForeground`),
    /// or `closeTimeout` passed (`timerFired`). The driver releases whoever waits to be suspended then; false
    /// otherwise, and at every later call until the next wait ends.
    public mutating func closeWaitEnded() -> Bool {
        defer { self.closeWaitOver = false }
        return self.closeWaitOver
    }

    /// Ends the close wait if there is one, on `generation`'s close when one is named.
    mutating func endCloseWait(of generation: Int? = nil) {
        guard let wait = self.state.closeWait, generation == nil || generation == wait.generation else { return }
        self.state.closeWait = nil
        self.closeWaitOver = true
    }

    /// A message of `bytes` bytes was read on `generation`: `.deliver` while that is the latest generation and its
    /// transport has not reported its end, in any phase (see "Delivery" above); `.discard` otherwise (stale: counted
    /// and recorded). A message is not a pong and extends nothing.
    public mutating func messageReceived(generation: Int, bytes: Int, now: Int) -> MessageDelivery {
        if let delivery = self.sideMessage(generation: generation, bytes: bytes, now: now) { return delivery }
        // Live or closing: the latest transport has not reported its end.
        guard generation == self.state.generation, self.state.stage.link != .none else {
            _ = self.stale(.message, generation: generation, now: now)
            return .discard
        }
        if self.configuration.recordsMessages {
            self.record(.message(bytes: bytes), now: now, from: self.state.phase)
        }
        return .deliver
    }

    /// Time passed: fires the connect deadline, the heartbeat (ping or pong timeout) or the end of a backoff wait.
    /// Early or repeated calls return `.none`.
    public mutating func timerFired(now: Int) -> SessionAction {
        self.state.outgoing.expire(now: now, notices: &self.outboxNotices)
        if let wait = self.state.closeWait, now >= wait.deadline {
            self.endCloseWait()  // the close was not seen sent in time: the app may be suspended
        }
        let side = self.sideTimerFired(now: now)
        return self.both(side, self.stageTimerFired(now: now))
    }

    /// The stage's part of `timerFired`: its deadline, the heartbeat or the end of a wait.
    private mutating func stageTimerFired(now: Int) -> SessionAction {
        switch self.state.stage {
        case .idle(.stopped, _), .idle(.offline, _), .idle(.suspended, _), .idle(.failed, _), .live(.kept):
            return .none
        case .live(.connecting(let deadline, _)):
            guard now >= deadline else { return .none }
            return self.close(reason: .connectTimeout, retry: .backoff, now: now)
        case .live(.open(var connection)):
            let tick = connection.heartbeat.tick(
                now: now, readingHeld: self.state.readingHeld, lastPingID: &self.state.lastPingID)
            switch tick {
            case nil:
                return .none
            case .ping(let ping):
                self.state.stage = .live(.open(connection))
                self.recordHeartbeat(.ping, now: now, from: .open)
                return .sendPing(generation: connection.generation, ping: ping)
            case .overdue(let ping):
                return ping.probe
                    ? self.close(reason: .probeTimeout, retry: .immediately, now: now)
                    : self.close(reason: .pongTimeout, retry: .backoff, now: now)
            }
        case .idle(.waiting(let retryAt), _):
            guard now >= retryAt else { return .none }
            return self.openTransport(now: now, from: .waiting)
        }
    }

    // MARK: - Path

    /// Starts a new path monitor generation (`NetworkHint.restart`): the hint becomes `unknown` and updates from
    /// older monitors are ignored. Returns the generation to pass to `pathChanged`. The phase is re-evaluated on
    /// the new monitor's first update (an `.offline` session connects as soon as it reports anything but
    /// `unavailable`).
    public mutating func restartPathMonitor() -> Int {
        self.state.lastPathReport = nil
        return self.state.connectivity.restartMonitor()
    }

    /// A path monitor's report: the machine compares it with the previous report of the same monitor. A switch of
    /// interface (Wi-Fi to cellular, or eth0 to eth1) between two usable reports warrants a probe, since the
    /// connection may be bound to the interface that went away; then as `pathChanged`.
    public mutating func pathReported(monitor: Int, _ report: PathReport, now: Int) -> SessionAction {
        guard monitor == self.state.hint.generation else { return self.stale(.path, generation: monitor, now: now) }
        let previous = self.state.lastPathReport
        self.state.lastPathReport = report
        let switched = previous.map {
            $0.state == .available && report.state == .available && $0.interfaces != report.interfaces
        } ?? false
        return self.pathChanged(
            monitor: monitor, state: report.state, expensive: report.expensive, constrained: report.constrained,
            interfacesChanged: switched, now: now)
    }

    /// A path update from the monitor of generation `monitor`. A repeated identical update does nothing.
    ///
    /// Offline or waiting and the path is usable again (or interfaces changed): `.openTransport` at once, attempts
    /// reset. Open and the path came back or interfaces changed: a liveness probe. Waiting and the path is
    /// unavailable: `.offline`. Otherwise only the hint changes.
    public mutating func pathChanged(
        monitor: Int, state: PathState, expensive: Bool, constrained: Bool, interfacesChanged: Bool, now: Int
    ) -> SessionAction {
        guard monitor == self.state.hint.generation else { return self.stale(.path, generation: monitor, now: now) }
        let previous = self.state.hint
        _ = self.state.connectivity.pathUpdated(
            generation: monitor, state: state, expensive: expensive, constrained: constrained)
        guard previous != self.state.hint || interfacesChanged else { return .none }
        let returned = state != .unavailable && (previous.state == .unavailable || interfacesChanged)
        let from = self.state.phase
        switch self.state.stage {
        case .idle(.stopped, _), .idle(.failed, _), .idle(.suspended, _), .live(.kept), .live(.connecting):
            self.record(.path(state), now: now, from: from)
            return .none
        case .live(.open):
            self.record(.path(state), now: now, from: from)
            guard returned else { return .none }
            if interfacesChanged, self.timing.switchDrain != nil {
                return self.beginHandover(now: now)  // make before break
            }
            return self.probe(now: now)
        case .idle(.waiting, let closing), .idle(.offline, let closing):
            if state == .unavailable {
                self.state.stage = .idle(.offline, closing: closing)
                self.record(.path(state), now: now, from: from)
                return .none
            }
            self.record(.path(state), now: now, from: from)
            guard returned || from == .offline else { return .none }
            self.resetAttempts()
            return self.openTransport(now: now, from: from)
        }
    }

    // MARK: - Lifecycle

    /// The app went to the background. See `LifecyclePolicy`. A repeated report does nothing.
    public mutating func enteredBackground(now: Int) -> SessionAction {
        let from = self.state.phase
        switch self.state.stage {
        case .idle(.stopped(inBackground: true), _), .idle(.failed(_, inBackground: true), _),
             .idle(.suspended, _), .live(.kept):
            return .none  // a repeated report
        case .idle(.stopped(inBackground: false), let closing):
            self.state.stage = .idle(.stopped(inBackground: true), closing: closing)
            self.record(.background, now: now, from: from)
            return .none
        case .idle(.failed(let reason, inBackground: false), let closing):
            self.state.stage = .idle(.failed(reason, inBackground: true), closing: closing)
            self.record(.background, now: now, from: from)
            return .none
        case .idle(.waiting, let closing), .idle(.offline, let closing):
            self.state.stage = .idle(.suspended, closing: closing)
            self.record(.background, now: now, from: from)
            return .none
        case .live(.open(var connection)) where self.configuration.lifecycle == .keepAndProbe:
            let side = self.closeSideForGood(reason: .enteredBackground, code: Self.goingAway, now: now)
            connection.heartbeat.pause()
            self.state.outgoing.leftOpen(notices: &self.outboxNotices)
            self.state.stage = .live(.kept(connection))
            self.record(.background, now: now, from: from)
            return side
        case .live(.connecting), .live(.open):
            let side = self.closeSideForGood(reason: .enteredBackground, code: Self.goingAway, now: now)
            let generation = self.state.generation
            self.state.outgoing.leftOpen(notices: &self.outboxNotices)
            self.state.stage = .idle(.suspended, closing: true)
            self.record(.background, now: now, from: from)
            self.record(.closed(reason: .enteredBackground, code: Int(Self.goingAway)), now: now, from: from)
            self.state.closeWait = CloseWait(
                generation: generation, deadline: Self.adding(self.timing.closeTimeout, to: now))
            return self.both(.closeTransport(
                generation: generation, reason: .enteredBackground, code: Self.goingAway, reportSent: true), side)
        }
    }

    /// The app came back. Kept transport: probe it. Otherwise re-evaluate: `.offline` if the path is unavailable,
    /// else `.openTransport` at once (attempts reset). A repeated report does nothing.
    public mutating func enteredForeground(now: Int) -> SessionAction {
        let from = self.state.phase
        self.endCloseWait()  // the app is back: nobody waits to be suspended
        switch self.state.stage {
        case .idle(.stopped(inBackground: false), _), .idle(.failed(_, inBackground: false), _),
             .live(.connecting), .live(.open), .idle(.waiting, _), .idle(.offline, _):
            return .none  // a repeated report
        case .idle(.stopped(inBackground: true), let closing):
            self.state.stage = .idle(.stopped(inBackground: false), closing: closing)
            self.record(.foreground, now: now, from: from)
            return .none
        case .idle(.failed(let reason, inBackground: true), let closing):
            self.state.stage = .idle(.failed(reason, inBackground: false), closing: closing)
            self.record(.foreground, now: now, from: from)
            return .none
        case .live(.kept(let connection)):
            self.state.stage = .live(.open(connection))
            self.record(.foreground, now: now, from: from)
            // The outbox waits for the probe's pong: no write to a connection that may be dead.
            let probe = self.probe(now: now)
            return probe == .none ? self.nextWrite(now: now) : probe
        case .idle(.suspended, let closing):
            self.resetAttempts()
            if self.state.hint.state == .unavailable {
                self.state.stage = .idle(.offline, closing: closing)
                self.record(.foreground, now: now, from: from)
                return .none
            }
            self.record(.foreground, now: now, from: from)
            return self.openTransport(now: now, from: from)
        }
    }

    // MARK: - Records

    /// Hands every log record produced since the last drain to `body`, oldest first, then forgets them.
    /// Allocates nothing; the one record of most events is moved to `body`, not copied.
    public mutating func drainRecords(_ body: (consuming LogRecord) -> Void) {
        self.records.drain(body)
    }

    // MARK: - Internals

    func isLive(_ generation: Int) -> Bool {
        switch self.state.stage {
        case .live(.connecting): generation == self.state.generation
        case .live(.open(let connection)), .live(.kept(let connection)): generation == connection.generation
        case .idle: false
        }
    }

    /// An event of a generation (transport or path monitor) that is not current: counted and recorded, no effect.
    mutating func stale(_ ignored: LogRecord.Ignored, generation: Int, now: Int) -> SessionAction {
        self.state.staleEvents += 1
        self.record(.stale(ignored: ignored), now: now, from: self.state.phase, generation: generation)
        return .none
    }

    /// Attempts start over: a connection proved healthy, the user started again, the path or the app came back.
    private mutating func resetAttempts() {
        self.state.backoff.reset()
        self.state.failingSince = nil
    }

    /// The session's connection of `generation`, open since `now`: not proved healthy yet, its heartbeat starting.
    func newConnection(_ generation: Int, now: Int) -> OpenConnection {
        let heartbeat = PingSchedule(
            interval: self.timing.heartbeatInterval, timeout: self.timing.heartbeatTimeout, openedAt: now)
        return OpenConnection(generation: generation, since: now, healthy: false, heartbeat: heartbeat)
    }

    /// The end of a close the machine ordered (`stop()`, the background, a handover's drain, a replaced attempt).
    /// Only an answered closing handshake (`.closedLocally`) proves that the peer read everything written before our
    /// close frame; any other end (a reset, our close unanswered, the peer's close crossing ours) leaves what was
    /// written to it since its last pong unconfirmed (`.connectionLost`).
    mutating func orderedCloseEnded(generation: Int, end: TransportEnd) {
        guard end != .closedLocally else { return }
        self.outboxNotices.append(.connectionLost(generation: generation))
    }

    /// The session's connection is gone (it ended, or the machine closes it): a connection that lasted
    /// `stablePeriod` proved healthy, `.now` sends parked for it are refused, what was written to it since its last
    /// pong is unconfirmed (`.connectionLost`), and `outcome` is the latest request's.
    mutating func connectionLeft(outcome: RequestOutcome, now: Int) {
        self.lost(self.state.generation)
        self.noteStability(now: now)
        self.state.outgoing.leftOpen(notices: &self.outboxNotices)
        self.state.connectivity.recordOutcome(outcome)
    }

    /// The open connection, about to end, lasted `stablePeriod`: it proved healthy (attempts reset).
    private mutating func noteStability(now: Int) {
        guard let connection = self.state.stage.connection, !connection.healthy,
              now - connection.since >= self.timing.stablePeriod else {
            return
        }
        self.resetAttempts()
    }

    /// A liveness probe of the open connection: `.sendPing` when a new ping goes out, `.none` when the outstanding
    /// one's deadline was pulled in instead.
    mutating func probe(now: Int) -> SessionAction {
        guard case .live(.open(var connection)) = self.state.stage else { return .none }
        let ping = connection.heartbeat.probe(
            now: now, timeout: self.timing.probeTimeout, lastPingID: &self.state.lastPingID)
        self.state.stage = .live(.open(connection))
        guard let ping else { return .none }
        self.recordHeartbeat(.ping, now: now, from: self.state.phase)
        return .sendPing(generation: connection.generation, ping: ping)
    }

    mutating func openTransport(now: Int, from: SessionPhase) -> SessionAction {
        self.state.askedAgain = false
        self.state.issued += 1
        self.state.generation = self.state.issued
        let generation = self.state.generation
        self.state.stage = .live(.connecting(deadline: now + self.timing.connectTimeout, greeting: false))
        self.record(.connecting(attempt: self.state.backoff.attempts), now: now, from: from)
        return .openTransport(generation: generation, held: self.state.readingHeld)
    }

    /// The machine ends the live transport itself (timeouts, ping failure): one close action, then settle.
    private mutating func close(reason: CloseReason, retry: Retry, now: Int) -> SessionAction {
        let outcome: RequestOutcome = reason == .pingFailed ? .connectionLost : .timeout
        if let action = self.sessionLeftBeforeTheMove(
            reason: reason, code: Int(Self.goingAway), outcome: outcome, closed: true, now: now) {
            return action
        }
        let side = self.closeDrainingSide(now: now)
        let generation = self.state.generation
        let from = self.state.phase
        self.connectionLeft(outcome: outcome, now: now)
        self.settle(reason: reason, code: Int(Self.goingAway), retry: retry, closing: true, now: now, from: from)
        return self.both(.closeTransport(generation: generation, reason: reason, code: Self.goingAway), side)
    }

    /// After the live transport ended (`closing`: the machine ordered its close) — the stage still the one it
    /// ended in: fail, suspend, go offline, or wait (with or without backoff).
    private mutating func settle(
        reason: CloseReason, code: Int?, retry: Retry, closing: Bool, now: Int, from: SessionPhase
    ) {
        let inBackground = self.state.stage.inBackground
        let proposed: Int
        switch retry {
        case .never:
            self.state.stage = .idle(.failed(reason, inBackground: inBackground), closing: closing)
            self.record(.closed(reason: reason, code: code), now: now, from: from)
            return
        case _ where inBackground:
            self.state.stage = .idle(.suspended, closing: closing)  // reconnect on foreground, not before
            self.record(.closed(reason: reason, code: code), now: now, from: from)
            return
        case _ where self.state.hint.state == .unavailable:
            self.state.stage = .idle(.offline, closing: closing)  // no attempt, none counted
            self.record(.closed(reason: reason, code: code), now: now, from: from)
            return
        case .immediately:
            self.wait(0, closing: closing, reason: reason, code: code, now: now, from: from)
            return
        case .backoff:
            proposed = self.state.backoff.nextDelay(using: &self.random)
        case .throttled(let retryAfter):
            let backoff = self.state.backoff.nextDelay(using: &self.random)
            let requested = retryAfter.map { min(max(0, $0), self.timing.maximumRetryAfter) }
            proposed = max(backoff, requested ?? self.timing.retryLaterDelay)
        }
        switch self.retryDecision(reason: reason, proposedDelay: proposed, now: now) {
        case .retry(let chosen):
            self.wait(max(0, chosen.milliseconds), closing: closing, reason: reason, code: code, now: now, from: from)
        case .stop:
            self.state.stage = .idle(.failed(reason, inBackground: false), closing: closing)
            self.record(.closed(reason: reason, code: code), now: now, from: from)
            self.record(.gaveUp(reason: reason, attempt: self.state.backoff.attempts), now: now, from: .failed)
        }
    }

    /// Settles into `.waiting` for `delay` ms.
    private mutating func wait(_ delay: Int, closing: Bool, reason: CloseReason, code: Int?, now: Int,
                               from: SessionPhase) {
        // Saturating: a cap configured near `Int.max` must not trap here.
        let (retryAt, overflow) = now.addingReportingOverflow(delay)
        self.state.stage = .idle(.waiting(retryAt: overflow ? Int.max : retryAt), closing: closing)
        self.record(.closed(reason: reason, code: code), now: now, from: from)
        self.record(.retryScheduled(attempt: self.state.backoff.attempts, delay: delay), now: now, from: .waiting)
    }

    /// The retry policy's limits, then its hook, on a counted failure whose attempt was just counted.
    private mutating func retryDecision(reason: CloseReason, proposedDelay: Int, now: Int) -> RetryDecision {
        let policy = self.configuration.retryPolicy
        let since = self.state.failingSince ?? now
        self.state.failingSince = since
        if let maximum = policy.maximumAttempts, self.state.backoff.attempts >= maximum { return .stop }
        if let maximum = self.timing.maximumElapsed, now - since >= maximum { return .stop }
        guard let decide = policy.decide else { return .retry(after: .milliseconds(proposedDelay)) }
        let context = RetryContext(
            attempt: self.state.backoff.attempts, elapsed: .milliseconds(now - since), failure: reason,
            proposedDelay: .milliseconds(proposedDelay))
        return decide(context) ?? .retry(after: .milliseconds(proposedDelay))
    }

    /// Whether and how to retry after a transport's terminal event (see the type's documentation).
    static func retry(after end: TransportEnd) -> Retry {
        switch end {
        case .peerClosed(let code):
            switch code {
            case 1003?, 1008?: return .never
            case 1012?, 1013?: return .throttled(retryAfter: nil)
            default: return .backoff
            }
        case .connectFailed(.unsupported, _):
            return .never
        case .connectFailed, .proxyUnreachable:
            return .backoff
        case .handshakeRejected(let status, let retryAfter), .proxyRejected(let status, let retryAfter):
            switch status {
            case 429, 503: return .throttled(retryAfter: retryAfter)
            case 408: return .backoff
            case 300..<500: return .never
            default: return .backoff
            }
        case .redirectFailed:
            return .never  // the server's configuration (or an attack): the next attempt is answered the same way
        case .socksRejected(let refusal):
            return refusal.isPermanent ? .never : .backoff
        case .tlsFailed(_, let permanent):
            return permanent ? .never : .backoff
        case .handshakeInvalid, .protocolViolation, .receiveFailed, .closedLocally, .requestFailed:
            return .backoff
        }
    }

    static func earliest(_ a: Int?, _ b: Int?) -> Int? {
        guard let a else { return b }
        guard let b else { return a }
        return min(a, b)
    }

    /// `now + delay`, saturating.
    static func adding(_ delay: Int, to now: Int) -> Int {
        let (sum, overflow) = now.addingReportingOverflow(delay)
        return overflow ? Int.max : sum
    }

    /// Records `event` on `generation` (the session's when nil). A close of the session's connection is the cause
    /// of the next published status.
    mutating func record(
        _ event: LogRecord.Event, now: Int, from: SessionPhase, to: SessionPhase? = nil, generation: Int? = nil
    ) {
        let generation = generation ?? self.state.generation
        if case .closed(let reason, _) = event, generation == self.state.generation {
            self.cause = reason
            self.state.lastEnd = reason
        }
        self.records.append(
            LogRecord(
                generation: generation, time: now, from: from, to: to ?? self.state.phase, event: event,
                timings: self.timings(for: event, generation: generation, now: now))
        )
    }

    /// A ping sent or a pong accepted: recorded unless `recordsHeartbeats` is off.
    private mutating func recordHeartbeat(_ event: LogRecord.Event, now: Int, from: SessionPhase) {
        guard self.configuration.recordsHeartbeats else { return }
        self.record(event, now: now, from: from)
    }
}
