/// The heartbeat of one open connection: when its next ping is due, and the ping it waits for.
///
/// The rules are `Heartbeat`'s, which keeps one for the connection it tracks; `SessionMachine` keeps one inside
/// each open connection. What outlives a connection stays with the owner and comes in as a parameter: the ping
/// ids (strictly increasing across connections, `lastPingID`) and whether reading is held (a fact about the
/// consumer, not the connection). Time is integer milliseconds passed in.
package struct PingSchedule: Equatable, Hashable, Sendable {
    /// A ping sent and not answered yet.
    package struct Ping: Equatable, Hashable, Sendable {
        package var id: UInt64
        package var sentAt: Int
        /// A pong counts only before this.
        package var deadline: Int
        /// The deadline comes from a probe (`probe(now:timeout:lastPingID:)`).
        package var probe: Bool
    }

    /// What `tick` found due.
    package enum Tick: Equatable, Sendable {
        /// A ping went out with this request id.
        case ping(UInt64)
        /// This ping's pong did not come before its deadline: the owner ends the connection (the schedule is spent).
        case overdue(Ping)
    }

    /// Milliseconds between a pong (or the open) and the next ping.
    package let interval: Int
    /// Milliseconds a pong may take.
    package let timeout: Int
    package private(set) var nextPing: Int
    package private(set) var outstanding: Ping?
    /// True after `pause()` until the next `probe`: no pings, no deadline.
    package private(set) var paused = false

    /// The connection opened at `now`: the first ping is due one `interval` later.
    package init(interval: Int, timeout: Int, openedAt now: Int) {
        self.interval = interval
        self.timeout = timeout
        self.nextPing = now + interval
    }

    /// The earliest `now` at which `tick` can act; nil while paused or while reading is held.
    package func nextWake(readingHeld: Bool) -> Int? {
        guard !self.paused, !readingHeld else { return nil }
        return self.outstanding?.deadline ?? self.nextPing
    }

    /// A pong for ping `id`: counts only for the outstanding ping and only if `now < deadline`.
    /// - Returns: the round-trip time in milliseconds when accepted, nil when ignored.
    package mutating func pong(ping id: UInt64, now: Int) -> Int? {
        guard !self.paused, let ping = self.outstanding, ping.id == id, now < ping.deadline else { return nil }
        self.outstanding = nil
        self.nextPing = now + self.interval
        return now - ping.sentAt
    }

    /// Advances time: a ping when one is due (its id taken from `lastPingID`), the overdue ping once its deadline
    /// passed. Nothing while paused or while reading is held.
    package mutating func tick(now: Int, readingHeld: Bool, lastPingID: inout UInt64) -> Tick? {
        guard !self.paused, !readingHeld else { return nil }
        if let ping = self.outstanding {
            guard now >= ping.deadline else { return nil }
            self.outstanding = nil
            return .overdue(ping)
        }
        guard now >= self.nextPing else { return nil }
        return .ping(self.send(now: now, timeout: self.timeout, probe: false, lastPingID: &lastPingID))
    }

    /// A liveness check due within `timeout`: a new ping (its id returned), or, with one outstanding, its deadline
    /// pulled in to `min(deadline, now + timeout)` (nil returned). Ends a `pause()`.
    package mutating func probe(now: Int, timeout: Int, lastPingID: inout UInt64) -> UInt64? {
        self.paused = false
        guard var ping = self.outstanding else {
            return self.send(now: now, timeout: timeout, probe: true, lastPingID: &lastPingID)
        }
        if now + timeout < ping.deadline {
            ping.deadline = now + timeout
            ping.probe = true
            self.outstanding = ping
        }
        return nil
    }

    /// No pings until the next probe; the outstanding ping is abandoned (its pong is ignored).
    package mutating func pause() {
        self.paused = true
        self.outstanding = nil
    }

    /// The owner reads again at `now`: the outstanding ping's deadline becomes at least `now + timeout`.
    package mutating func resumeReading(now: Int) {
        guard var ping = self.outstanding else { return }
        ping.deadline = max(ping.deadline, now + self.timeout)
        self.outstanding = ping
    }

    private mutating func send(now: Int, timeout: Int, probe: Bool, lastPingID: inout UInt64) -> UInt64 {
        lastPingID &+= 1
        self.outstanding = Ping(id: lastPingID, sentAt: now, deadline: now + timeout, probe: probe)
        return lastPingID
    }
}
