/// The heartbeat of one open connection: when its next ping is due, and the ping it waits for.
///
/// The rules are `Heartbeat`'s, which keeps one for the connection it tracks; `SessionMachine` keeps one inside
/// each open connection. What outlives a connection stays with the owner and comes in as a parameter: the ping
/// ids (strictly increasing across connections, `lastPingID`) and whether reading is held (a fact about the
/// consumer, not the connection). Time is integer milliseconds passed in.
///
/// A late pong explained: when the deadline has come and a frame is still arriving (`explainDelay`), the pong may
/// be queued behind it, so the deadline moves to one timeout after that frame's latest byte, as long as bytes keep
/// coming; once the frame is whole, to one timeout after its last byte. Only the frame that was arriving when the
/// pong fell due explains the delay: the frames after it, whole or not, do not (the peer could have sent the pong
/// before them). A pong the transport has decoded but the owner has not handled yet (`Arrival.latestPongID`), whose
/// bytes arrived before the deadline (`Arrival.latestPongAt`), is on its way, not late: the deadline moves one timeout
/// on, for its event. One whose bytes arrived at or after the deadline is late, whether the deadline or its event is
/// handled first (the owner reports the arrival before an overdue pong's event too).
package struct PingSchedule: Equatable, Hashable, Sendable {
    /// A ping sent and not answered yet.
    package struct Ping: Equatable, Hashable, Sendable {
        package var id: UInt64
        package var sentAt: Int
        /// A pong counts only before this.
        package var deadline: Int
        /// The deadline comes from a probe (`probe(now:timeout:lastPingID:)`).
        package var probe: Bool
        /// Milliseconds the pong may take after the latest byte of a frame that explains its delay.
        package var timeout: Int
        /// The frame (its number among the connection's frames, from 0) that was arriving when the pong fell due and
        /// moved the deadline; nil while none did.
        package var explainingFrame: Int?
        /// Its pong came at or after the deadline and was ignored: the transport's report of that pong
        /// (`Arrival.latestPongID`) explains nothing more.
        package var answeredLate = false
    }

    /// What the connection received, in the schedule's milliseconds (`InboundProgress` at one moment).
    package struct Arrival: Equatable, Sendable {
        package var framesCompleted: Int
        package var frameInProgress: Bool
        package var lastByteAt: Int?
        package var lastFrameCompletedAt: Int?
        /// The ping whose pong the transport decoded last (`InboundProgress.latestPongID`).
        package var latestPongID: UInt64?
        /// When that pong's bytes arrived; nil when the transport cannot say (the pong is then taken as on time).
        package var latestPongAt: Int?

        package init(
            framesCompleted: Int, frameInProgress: Bool, lastByteAt: Int?, lastFrameCompletedAt: Int?,
            latestPongID: UInt64? = nil, latestPongAt: Int? = nil
        ) {
            self.framesCompleted = framesCompleted
            self.frameInProgress = frameInProgress
            self.lastByteAt = lastByteAt
            self.lastFrameCompletedAt = lastFrameCompletedAt
            self.latestPongID = latestPongID
            self.latestPongAt = latestPongAt
        }
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
        guard !self.paused, var ping = self.outstanding, ping.id == id else { return nil }
        guard now < ping.deadline else {
            ping.answeredLate = true  // still overdue; the report of this pong must not move the deadline again
            self.outstanding = ping
            return nil
        }
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

    /// The outstanding pong is due (`now >= deadline`) and `arrival` says what the connection has received: when a
    /// frame explains the delay (see the type), the deadline moves to one timeout after its latest byte, if that is
    /// later than `now`. Returns the new deadline, or nil when nothing explains the delay (the ping is overdue).
    package mutating func explainDelay(_ arrival: Arrival, now: Int) -> Int? {
        guard !self.paused, var ping = self.outstanding, now >= ping.deadline else { return nil }
        let pongOnItsWay = arrival.latestPongID == ping.id && arrival.latestPongAt.map { $0 < ping.deadline } ?? true
        if pongOnItsWay, !ping.answeredLate {
            // The pong arrived before the deadline and is on its way: the transport decoded it (often in the read
            // that completed the frame it queued behind) and its event has not been handled yet. It is not late.
            ping.deadline = now + ping.timeout
            self.outstanding = ping
            return ping.deadline
        }
        // The first time, the frame arriving now; later, the same frame, still arriving or the latest one completed.
        let frame = ping.explainingFrame ?? arrival.framesCompleted
        let lastByte: Int?
        if arrival.frameInProgress, arrival.framesCompleted == frame {
            lastByte = arrival.lastByteAt
        } else if ping.explainingFrame != nil, arrival.framesCompleted == frame + 1 {
            lastByte = arrival.lastFrameCompletedAt  // whole now: its pong comes right behind its last byte
        } else {
            lastByte = nil  // no frame arriving, or a later one: the peer could have sent the pong before it
        }
        guard let lastByte, lastByte > now - ping.timeout else { return nil }
        ping.explainingFrame = frame
        ping.deadline = lastByte + ping.timeout
        self.outstanding = ping
        return ping.deadline
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
            ping.timeout = min(ping.timeout, timeout)
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
        self.outstanding = Ping(
            id: lastPingID, sentAt: now, deadline: now + timeout, probe: probe, timeout: timeout, explainingFrame: nil)
        return lastPingID
    }
}
