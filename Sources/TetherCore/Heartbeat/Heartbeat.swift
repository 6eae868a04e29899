/// The heartbeat of one connection at a time: when to ping, when a missing pong means the link is dead.
///
/// The public API is the heartbeat specification's (docs/ARCHITECTURE.md §3), plus `nextWake`, ping request ids
/// and `probe(now:timeout:)`. Time is integer milliseconds passed in; nothing here reads a clock. It tracks one
/// connection at a time and keeps that connection's `PingSchedule` while it is open (`SessionMachine` keeps one in
/// each open connection instead).
///
/// Rules:
/// - After `opened`, wait one `interval`; then `tick` returns `.ping(generation)` and the pong is due before
///   `now + timeout`. At most one ping is outstanding.
/// - A pong counts only if `now < deadline`: a pong at exactly the deadline is late, so the outcome does not depend
///   on whether the timer or the pong is handled first.
/// - At `now >= deadline` without a pong, `tick` returns `.close(generation)` once and the phase becomes `idle`.
/// - Events for another generation, a second `opened`, and pongs while idle or connecting change nothing.
/// - A business message is not a pong; there is deliberately no API that extends the deadline.
/// - While the owner holds reading (`holdReading()`: its consumer is behind, so the pong may be sitting unread in
///   the socket), no ping is sent and no deadline runs; `resumeReading(now:)` gives an outstanding ping a full
///   `timeout` from then on. Time the owner spent not reading is never counted against the peer.
public struct Heartbeat: Equatable, Hashable, Sendable {
    /// Where the current connection is.
    public enum Phase: Equatable, Hashable, Sendable {
        case idle, connecting, open
    }

    /// What the driver must do for the connection of the given generation.
    public enum Action: Equatable, Hashable, Sendable {
        /// Send a ping (its request id is `lastPingID`).
        case ping(Int)
        /// The pong did not arrive before the deadline: close the connection.
        case close(Int)
    }

    /// The generation of the latest connection, handed out by `connect()`.
    public private(set) var generation = 0
    /// Where the connection of `generation` is; its schedule while open.
    private var connection = Connection.idle
    /// The request id of the latest ping; strictly increasing across generations, 0 before the first ping.
    public private(set) var lastPingID: UInt64 = 0
    /// True between `holdReading()` and `resumeReading(now:)`, whatever the connection: no pings, no deadline.
    public private(set) var readingHeld = false
    /// Milliseconds between a pong (or the open) and the next ping.
    public let interval: Int
    /// Milliseconds a pong may take.
    public let timeout: Int

    private enum Connection: Equatable, Hashable, Sendable {
        case idle, connecting
        case open(PingSchedule)
    }

    /// - Parameters:
    ///   - interval: milliseconds from the open (or the last pong) to the next ping.
    ///   - timeout: milliseconds a pong may take; a pong at exactly `sent + timeout` is late.
    public init(interval: Int, timeout: Int) {
        precondition(interval >= 0 && timeout > 0, "Heartbeat needs interval >= 0 and timeout > 0")
        self.interval = interval
        self.timeout = timeout
    }

    public var phase: Phase {
        switch self.connection {
        case .idle: .idle
        case .connecting: .connecting
        case .open: .open
        }
    }

    private var schedule: PingSchedule? {
        guard case .open(let schedule) = self.connection else { return nil }
        return schedule
    }

    /// True while the outstanding ping's deadline comes from `probe(now:timeout:)`.
    public var probing: Bool { self.schedule?.outstanding?.probe ?? false }
    /// True after `pause()` until the next `probe`, `opened` or `connect`: no pings, no deadline.
    public var paused: Bool { self.schedule?.paused ?? false }
    /// The deadline of the outstanding ping, if any.
    public var pongDeadline: Int? { self.schedule?.outstanding?.deadline }

    /// The earliest `now` at which `tick(now:)` can return an action; nil when it cannot (not open, or paused).
    /// A driver sleeps until then instead of polling.
    public var nextWake: Int? { self.schedule?.nextWake(readingHeld: self.readingHeld) }

    /// Starts a new connection: returns its generation. Every event of older generations is ignored from now on.
    public mutating func connect() -> Int {
        self.generation += 1
        self.connection = .connecting
        return self.generation
    }

    /// The connection of generation `id` opened at `now`; the first ping is due one `interval` later.
    public mutating func opened(_ id: Int, now: Int) {
        guard id == self.generation, self.connection == .connecting else {
            return
        }
        self.connection = .open(PingSchedule(interval: self.interval, timeout: self.timeout, openedAt: now))
    }

    /// A pong for generation `id`, without a request id: it answers whatever ping is outstanding.
    public mutating func pong(_ id: Int, now: Int) {
        _ = self.pong(id, ping: self.lastPingID, now: now)
    }

    /// A pong for ping `ping` of generation `id`.
    ///
    /// Counts only for the outstanding ping and only if `now < deadline`; a second completion of the same ping,
    /// a pong for an older ping id, or a late pong changes nothing.
    /// - Returns: the round-trip time in milliseconds when the pong was accepted, nil when it was ignored.
    @discardableResult
    public mutating func pong(_ id: Int, ping: UInt64, now: Int) -> Int? {
        guard id == self.generation, case .open(var schedule) = self.connection else { return nil }
        let rtt = schedule.pong(ping: ping, now: now)
        self.connection = .open(schedule)
        return rtt
    }

    /// Advances time: returns `.ping` when one is due, `.close` once when the outstanding pong is overdue.
    public mutating func tick(now: Int) -> Action? {
        guard case .open(var schedule) = self.connection else { return nil }
        switch schedule.tick(now: now, readingHeld: self.readingHeld, lastPingID: &self.lastPingID) {
        case nil:
            return nil
        case .ping:
            self.connection = .open(schedule)
            return .ping(self.generation)
        case .overdue:
            self.connection = .idle
            return .close(self.generation)
        }
    }

    /// A liveness check right now (after a path change or on return to the foreground), due within `timeout`.
    ///
    /// Without an outstanding ping it returns `.ping` with a new ping id and deadline `now + timeout`. With one,
    /// it returns nil and pulls that ping's deadline in to `min(deadline, now + timeout)`. Also ends a `pause()`.
    /// Returns nil when the connection is not open.
    public mutating func probe(now: Int, timeout: Int) -> Action? {
        guard case .open(var schedule) = self.connection else { return nil }
        let ping = schedule.probe(now: now, timeout: timeout, lastPingID: &self.lastPingID)
        self.connection = .open(schedule)
        return ping.map { _ in .ping(self.generation) }
    }

    /// Stops pinging while the app is in the background (timers are not guaranteed there).
    ///
    /// The outstanding ping, if any, is abandoned: its pong is ignored, and `probe` starts a fresh one.
    public mutating func pause() {
        guard case .open(var schedule) = self.connection else { return }
        schedule.pause()
        self.connection = .open(schedule)
    }

    /// The owner stopped reading the connection (its consumer is behind): a pong cannot be seen until it reads
    /// again, so neither a ping nor the pong deadline runs meanwhile. Holds across generations (it is about the
    /// consumer, not the connection).
    public mutating func holdReading() {
        self.readingHeld = true
    }

    /// The owner reads again at `now`: an outstanding ping's deadline becomes at least `now + timeout`; a ping that
    /// fell due meanwhile goes out at the next `tick`.
    public mutating func resumeReading(now: Int) {
        guard self.readingHeld else { return }
        self.readingHeld = false
        guard case .open(var schedule) = self.connection else { return }
        schedule.resumeReading(now: now)
        self.connection = .open(schedule)
    }

    /// The connection ended or was closed by its owner: back to idle, later events of this generation are ignored.
    public mutating func ended() {
        self.connection = .idle
    }
}
