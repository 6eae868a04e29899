import TetherCore

/// A snapshot of a client's connection, as a UI or a test sees it (`WebSocketClient.state`, `states`,
/// `WebSocketEvent.stateChanged`): the session machine's status, each field only in the phase it belongs to, with
/// its times also as instants an app can show ("retrying in 4 s") without knowing when the client was made.
public struct ConnectionState: Equatable, Sendable {
    /// Where the session is: stopped, connecting, open, waiting (backoff), offline, suspended or failed.
    public var phase: SessionPhase
    /// The generation of the newest transport; 0 before the first connection attempt.
    public var generation: Int
    /// Failed attempts since the connection last proved healthy.
    public var attempts: Int
    /// When waiting: the next attempt's time, in milliseconds since the client was created, on the client's clock
    /// (what a test with a `ManualClock` advances to). An app shows `retryInstant` or `timeUntilRetry()`.
    public var retryAt: Int?
    /// When waiting: the instant of the next attempt on the continuous clock. With a client on the continuous clock
    /// (the default) it is exact; with an injected clock, `retryAt` counted from the continuous clock's reading when
    /// the client was created.
    public var retryInstant: ContinuousClock.Instant? {
        get { self.retryOffset.map { Self.epoch + $0 } }
        set { self.retryOffset = newValue.map { Self.epoch.duration(to: $0) } }
    }
    /// `retryInstant`, kept as the time since `epoch`: `ContinuousClock.Instant` is not a frozen type, so a state that
    /// stored one, and every event that carries a state (`WebSocketEvent`), was copied and moved through value
    /// witnesses and the runtime's generic enum functions, several times per event on the way to its reader.
    private var retryOffset: Duration?
    /// Any fixed instant: only differences matter.
    private static let epoch = ContinuousClock.now
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
    /// with how), or `.unknown` before anything is known.
    public var connectivity: ConnectivityStatus
    /// While open: what the opening handshake of the session's connection agreed — the subprotocol the server chose,
    /// the extensions (permessage-deflate and its windows), and the response headers named in
    /// `WebSocketConfiguration.responseHeaderNames`. Nil in every other phase. A make-before-break handover brings
    /// the new connection's.
    public var handshake: HandshakeResult?

    /// A state as the client would report it, for an app's previews and tests; `retryInstant` is nil unless given.
    public init(
        phase: SessionPhase, generation: Int, attempts: Int, retryAt: Int?,
        failure: CloseReason?, lastRTT: Int?, path: PathState, connectivity: ConnectivityStatus = .unknown,
        pathIsExpensive: Bool = false, pathIsConstrained: Bool = false, retryInstant: ContinuousClock.Instant? = nil,
        handshake: HandshakeResult? = nil
    ) {
        self.phase = phase
        self.generation = generation
        self.attempts = attempts
        self.retryAt = retryAt
        self.retryOffset = retryInstant.map { Self.epoch.duration(to: $0) }
        self.failure = failure
        self.lastRTT = lastRTT
        self.path = path
        self.pathIsExpensive = pathIsExpensive
        self.pathIsConstrained = pathIsConstrained
        self.connectivity = connectivity
        self.handshake = handshake
    }

    /// The machine's status, its milliseconds since the client's creation placed on the continuous clock from
    /// `origin` (the continuous clock's reading when the client was created), with the open connection's `handshake`.
    init(_ status: SessionStatus, origin: ContinuousClock.Instant, handshake: HandshakeResult? = nil) {
        self.init(
            phase: status.phase, generation: status.generation, attempts: status.attempts, retryAt: status.retryAt,
            failure: status.failure, lastRTT: status.lastRTT, path: status.path, connectivity: status.connectivity,
            pathIsExpensive: status.pathIsExpensive, pathIsConstrained: status.pathIsConstrained,
            retryInstant: status.retryAt.map { origin.advanced(by: .milliseconds($0)) }, handshake: handshake)
    }

    /// When waiting: how long until the next attempt, from `now` (default: the continuous clock's now), never below
    /// zero — the "retrying in 4 s" of a banner. Nil in any other phase.
    public func timeUntilRetry(now: ContinuousClock.Instant = .now) -> Duration? {
        self.retryInstant.map { max(.zero, now.duration(to: $0)) }
    }
}
