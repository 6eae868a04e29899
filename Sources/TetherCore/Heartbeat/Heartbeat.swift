/// The heartbeat of one connection at a time: when to ping, when a missing pong means the link is dead.
///
/// The public API is the heartbeat specification's (docs/ARCHITECTURE.md §3), plus `nextWake`, ping request ids
/// and `probe(now:timeout:)`. Time is integer milliseconds passed in; nothing here reads a clock.
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
    public private(set) var phase = Phase.idle
    /// The request id of the latest ping; strictly increasing across generations, 0 before the first ping.
    public private(set) var lastPingID: UInt64 = 0
    /// True while the outstanding ping's deadline comes from `probe(now:timeout:)`.
    public private(set) var probing = false
    /// True after `pause()` until the next `probe`, `opened` or `connect`: no pings, no deadline.
    public private(set) var paused = false
    /// True between `holdReading()` and `resumeReading(now:)`, whatever the connection: no pings, no deadline.
    public private(set) var readingHeld = false
    private var nextPing = 0
    private var deadline: Int?
    private var pingSentAt = 0
    /// Milliseconds between a pong (or the open) and the next ping.
    public let interval: Int
    /// Milliseconds a pong may take.
    public let timeout: Int

    /// - Parameters:
    ///   - interval: milliseconds from the open (or the last pong) to the next ping.
    ///   - timeout: milliseconds a pong may take; a pong at exactly `sent + timeout` is late.
    public init(interval: Int, timeout: Int) {
        precondition(interval >= 0 && timeout > 0, "Heartbeat needs interval >= 0 and timeout > 0")
        self.interval = interval
        self.timeout = timeout
    }

    /// The deadline of the outstanding ping, if any.
    public var pongDeadline: Int? { self.deadline }

    /// The earliest `now` at which `tick(now:)` can return an action; nil when it cannot (not open, or paused).
    /// A driver sleeps until then instead of polling.
    public var nextWake: Int? {
        guard self.phase == .open, !self.paused, !self.readingHeld else { return nil }
        return self.deadline ?? self.nextPing
    }

    /// Starts a new connection: returns its generation. Every event of older generations is ignored from now on.
    public mutating func connect() -> Int {
        self.generation += 1
        self.phase = .connecting
        self.deadline = nil
        self.probing = false
        self.paused = false
        return self.generation
    }

    /// The connection of generation `id` opened at `now`; the first ping is due one `interval` later.
    public mutating func opened(_ id: Int, now: Int) {
        guard id == self.generation, self.phase == .connecting else {
            return
        }
        self.phase = .open
        self.nextPing = now + self.interval
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
        guard id == self.generation, self.phase == .open, !self.paused, ping == self.lastPingID,
              let limit = self.deadline, now < limit else {
            return nil
        }
        self.deadline = nil
        self.probing = false
        self.nextPing = now + self.interval
        return now - self.pingSentAt
    }

    /// Advances time: returns `.ping` when one is due, `.close` once when the outstanding pong is overdue.
    public mutating func tick(now: Int) -> Action? {
        guard self.phase == .open, !self.paused, !self.readingHeld else { return nil }
        if let limit = self.deadline {
            guard now >= limit else { return nil }
            self.phase = .idle
            self.deadline = nil
            return .close(self.generation)
        }
        guard now >= self.nextPing else { return nil }
        return self.sendPing(now: now, timeout: self.timeout)
    }

    /// A liveness check right now (after a path change or on return to the foreground), due within `timeout`.
    ///
    /// Without an outstanding ping it returns `.ping` with a new ping id and deadline `now + timeout`. With one,
    /// it returns nil and pulls that ping's deadline in to `min(deadline, now + timeout)`. Also ends a `pause()`.
    /// Returns nil when the connection is not open.
    public mutating func probe(now: Int, timeout: Int) -> Action? {
        guard self.phase == .open else { return nil }
        self.paused = false
        if let limit = self.deadline {
            if now + timeout < limit {
                self.deadline = now + timeout
                self.probing = true
            }
            return nil
        }
        let action = self.sendPing(now: now, timeout: timeout)
        self.probing = true
        return action
    }

    /// Stops pinging while the app is in the background (timers are not guaranteed there).
    ///
    /// The outstanding ping, if any, is abandoned: its pong is ignored, and `probe` starts a fresh one.
    public mutating func pause() {
        guard self.phase == .open else { return }
        self.paused = true
        self.deadline = nil
        self.probing = false
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
        if let limit = self.deadline { self.deadline = max(limit, now + self.timeout) }
    }

    /// The connection ended or was closed by its owner: back to idle, later events of this generation are ignored.
    public mutating func ended() {
        self.phase = .idle
        self.deadline = nil
        self.probing = false
        self.paused = false
    }

    private mutating func sendPing(now: Int, timeout: Int) -> Action {
        self.lastPingID &+= 1
        self.deadline = now + timeout
        self.pingSentAt = now
        self.probing = false
        return .ping(self.generation)
    }
}
