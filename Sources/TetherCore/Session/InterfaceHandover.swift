/// The make-before-break rules of `InterfaceSwitchPolicy.makeBeforeBreak` as a child machine: the overlap of the
/// open connection (the *old* generation) and the one opened on the new path (the *new* generation), from the switch
/// until the old one's end. Facts in, `[Action]` out, time as integer milliseconds; the parent session machine
/// hands out the generations, keeps the session `.open` throughout, and translates the actions.
///
/// The rules:
/// - A switch while open opens the new generation at once (the parent counts no attempt), within `connectTimeout`.
/// - The greeting (when the session greets) runs on the new generation first; writes (`.now` sends and the outbox)
///   stay on the old one until the new one is open and greeted, then move to it (`moveWrites`).
/// - The old generation is closed with 1001 `drain` ms after the move; everything it reads until its end is
///   delivered.
/// - The new generation failing before the move (its end, or the connect deadline) abandons the handover: the old one
///   stays the session's, and its liveness is probed as under `.probe` (`abandoned`).
/// - The old generation ending before the move: the new one becomes the session's connection attempt
///   (`oldEndedFirst`), exactly as after a path-driven reconnect.
/// - Both generations are live from the switch until their own end: their events are not stale, whichever the
///   session writes to (`isLive`). After its end a generation's events are stale.
/// - A new switch before the move replaces the new generation (closed, another opened); a switch during the drain
///   ends the drain at once (the old one closed) and starts a handover from the current connection.
package struct InterfaceHandover: Equatable, Sendable {
    package enum State: Equatable, Sendable {
        /// No handover: one connection, the parent's.
        case idle
        /// The new generation is opening (`greeting: false`) or sending the greeting, until `deadline`; the session
        /// writes to `old`.
        case connecting(old: Int, new: Int, deadline: Int, greeting: Bool)
        /// The session writes to `new`; `old` is closed with 1001 at `until`.
        case draining(old: Int, new: Int, until: Int)
        /// `old` was told to close and has not reported its end: what it reads is still delivered.
        case closingOld(old: Int, new: Int)
    }

    package enum Action: Equatable, Sendable {
        /// Open the transport of `generation` on the new path, bound to `interface` when the monitor named one.
        case open(generation: Int, interface: String?)
        /// Send the greeting on `generation` (the session greets), then report `greetingSent`.
        case sendGreeting(generation: Int)
        /// From now on `.now` sends and the outbox go to `generation`.
        case moveWrites(to: Int)
        /// Close `generation` with 1001 (going away).
        case close(generation: Int)
        /// The new generation failed before the move (`reason`): stay on `old` and probe its liveness.
        case abandoned(new: Int, reason: CloseReason, old: Int)
        /// The old generation ended before the move: the session continues as after a path-driven reconnect, with
        /// `new` as its connection attempt.
        case oldEndedFirst(old: Int, new: Int)
        /// The overlap is over: only `generation` is left.
        case finished(generation: Int)
    }

    package private(set) var state = State.idle
    /// Milliseconds the old generation is kept after the move.
    let drain: Int
    /// The new generation's deadline for its open and greeting, as the session's connect deadline.
    let connectTimeout: Int
    let greets: Bool

    package init(drain: Int, connectTimeout: Int, greets: Bool) {
        self.drain = drain
        self.connectTimeout = connectTimeout
        self.greets = greets
    }

    /// Whether events of `generation` are live: the parent's own connection when idle (not this machine's to say),
    /// else either generation of the overlap until its end.
    package func isLive(_ generation: Int) -> Bool {
        switch self.state {
        case .idle: false
        case .connecting(let old, let new, _, _), .draining(let old, let new, _), .closingOld(let old, let new):
            generation == old || generation == new
        }
    }

    /// The generation `.now` sends and the outbox go to during the overlap; nil when idle (the parent's).
    package var writeGeneration: Int? {
        switch self.state {
        case .idle: nil
        case .connecting(let old, _, _, _): old
        case .draining(_, let new, _), .closingOld(_, let new): new
        }
    }

    /// When `timerFired` is due next; nil when nothing is timed.
    package var nextWake: Int? {
        switch self.state {
        case .idle, .closingOld: nil
        case .connecting(_, _, let deadline, _): deadline
        case .draining(_, _, let until): until
        }
    }

    /// The path moved to other interfaces while `current` is open; `next` is the generation the parent handed out.
    package mutating func interfacesSwitched(current: Int, next: Int, interface: String?, now: Int) -> [Action] {
        var actions: [Action] = []
        var old = current
        switch self.state {
        case .idle:
            break
        case .connecting(let previousOld, let replaced, _, _):
            old = previousOld  // the session still writes to it
            actions.append(.close(generation: replaced))
        case .draining(let drained, let new, _):
            old = new
            actions.append(.close(generation: drained))
        case .closingOld(_, let new):
            old = new  // the old one's close is already ordered; its end is expected and will be stale
        }
        self.state = .connecting(old: old, new: next, deadline: now + self.connectTimeout, greeting: false)
        actions.append(.open(generation: next, interface: interface))
        return actions
    }

    /// The transport of `generation` opened.
    package mutating func transportOpened(generation: Int, now: Int) -> [Action] {
        guard case .connecting(let old, generation, let deadline, greeting: false) = self.state else { return [] }
        if self.greets {
            self.state = .connecting(old: old, new: generation, deadline: deadline, greeting: true)
            return [.sendGreeting(generation: generation)]
        }
        return self.move(old: old, new: generation, now: now)
    }

    /// The greeting went out on `generation`.
    package mutating func greetingSent(generation: Int, now: Int) -> [Action] {
        guard case .connecting(let old, generation, _, greeting: true) = self.state else { return [] }
        return self.move(old: old, new: generation, now: now)
    }

    /// The transport of `generation` reported its end with `reason`.
    package mutating func transportEnded(generation: Int, reason: CloseReason) -> [Action] {
        switch self.state {
        case .idle:
            return []
        case .connecting(let old, let new, _, _):
            if generation == new {
                self.state = .idle
                return [.abandoned(new: new, reason: reason, old: old)]
            }
            guard generation == old else { return [] }
            self.state = .idle
            return [.oldEndedFirst(old: old, new: new)]
        case .draining(let old, let new, _), .closingOld(let old, let new):
            if generation == old {
                self.state = .idle
                return [.finished(generation: new)]
            }
            guard generation == new else { return [] }
            // The session's connection ended during the drain: the parent handles it as any end of its connection;
            // the old one has nothing left to carry.
            self.state = .idle
            return self.isClosingOld ? [] : [.close(generation: old)]
        }
    }

    /// Time passed: the new generation's deadline, or the end of the drain.
    package mutating func timerFired(now: Int) -> [Action] {
        switch self.state {
        case .idle, .closingOld:
            return []
        case .connecting(let old, let new, let deadline, _):
            guard now >= deadline else { return [] }
            self.state = .idle
            return [.close(generation: new), .abandoned(new: new, reason: .connectTimeout, old: old)]
        case .draining(let old, let new, let until):
            guard now >= until else { return [] }
            self.state = .closingOld(old: old, new: new)
            return [.close(generation: old)]
        }
    }

    private var isClosingOld: Bool {
        if case .closingOld = self.state { return true }
        return false
    }

    private mutating func move(old: Int, new: Int, now: Int) -> [Action] {
        self.state = .draining(old: old, new: new, until: now + self.drain)
        return [.moveWrites(to: new)]
    }
}
