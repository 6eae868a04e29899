/// Make-before-break (`InterfaceSwitchPolicy.makeBeforeBreak`): on an interface switch while open, a second
/// transport (the *side*, `State.side`) opens on the new path beside the session's, and the session moves to it once
/// it is open and greeted. The rules:
/// - A switch while `.open` opens the new generation at once, counting no attempt, within `connectTimeout`. The
///   session stays `.open` throughout, and its generation (`generation`, `status`) stays the old one until the move.
/// - The greeting (when the session greets) runs on the new transport first; `.now` sends and the outbox stay on the
///   old one until then, and move to the new one with the session (`.handover(.moved)`).
/// - The old transport is closed with 1001 (`handedOver`) `drain` ms after the move; everything it reads until its
///   end is delivered.
/// - The new transport failing before the move (its end, a failed greeting, or the connect deadline) abandons the
///   handover (`.handover(.abandoned)`): the session stays on the old one and probes it, as under `.probe`.
/// - The old transport ending before the move makes the new one the session's connection attempt
///   (`.handover(.oldEndedFirst)`, phase `.connecting`), exactly as after a path-driven reconnect.
/// - The new connection ending during the drain is the end of the session's connection (retried as any), and the
///   old one is closed at once.
/// - Both transports are live until their own end: the side's events are never stale while it exists (no ping goes
///   out on it, so a pong on it changes nothing); after its end they are.
/// - A switch during a handover replaces its new transport (closed, another opened), or ends a drain at once. A
///   transport closed so, or still closing when the switch came, stays expected until its end (`closedSides`): what
///   it reads until then is delivered, as the README promises of the old connection.
/// - Stopping or going to the background closes both.
///
/// An event here may need two actions (two transports to close, or one to close and one to probe): the first is
/// returned, the second waits in `followUp()`.
extension SessionMachine {
    /// The next action of the latest event, after the one it returned; nil when there is none. The driver runs
    /// every follow-up, in order, before the next event.
    public mutating func followUp() -> SessionAction? {
        self.followUps.isEmpty ? nil : self.followUps.removeFirst()
    }

    /// Returns `first`, or `second` when `first` is `.none`; a second action waits in `followUp()`.
    mutating func both(_ first: SessionAction, _ second: SessionAction) -> SessionAction {
        guard first != .none else { return second }
        if second != .none { self.followUps.append(second) }
        return first
    }

    // MARK: - Starting

    /// The path switched interfaces while the session is open: open the side on the new path.
    mutating func beginHandover(now: Int) -> SessionAction {
        var first = SessionAction.none
        switch self.state.side {
        case .opening(let replaced, _, _)?:
            first = self.closeSide(replaced, reason: .handedOver, now: now)  // the newer path wins
        case .draining(let old, _)?:
            first = self.closeSide(old, reason: .handedOver, now: now)  // the drain ends at once
        case .closing?, nil:
            break
        }
        if case .closing(let closed)? = self.state.side {
            self.state.closedSides.append(closed)  // delivered until its end, beside the new side
        }
        self.state.issued += 1
        let generation = self.state.issued
        self.state.side = .opening(
            generation: generation, deadline: Self.adding(self.timing.connectTimeout, to: now), greeting: false)
        self.record(.handover(.opening), now: now, from: .open, generation: generation)
        return self.both(first, .openTransport(generation: generation, held: self.state.readingHeld))
    }

    // MARK: - The side's events

    /// Whether `generation` is a handover's transport: the side, or one closed before its end (`closedSides`).
    func isSide(_ generation: Int) -> Bool {
        self.state.side?.generation == generation || self.state.closedSides.contains(generation)
    }

    /// An event of a side closed before its end (`closedSides`) that is not its end: nothing (it is closing); nil
    /// for any other generation.
    private func closedSideEvent(_ generation: Int) -> SessionAction? {
        self.state.closedSides.contains(generation) ? SessionAction.none : nil
    }

    /// The side's transport opened: the greeting first, or the move.
    mutating func sideOpened(generation: Int, now: Int) -> SessionAction? {
        guard let side = self.state.side, side.generation == generation else {
            return self.closedSideEvent(generation)
        }
        guard case .opening(_, let deadline, greeting: false) = side else { return SessionAction.none }
        guard !self.configuration.greets else {
            self.state.side = .opening(generation: generation, deadline: deadline, greeting: true)
            self.record(.greeting, now: now, from: self.state.phase, generation: generation)
            return .sendGreeting(generation: generation)
        }
        return self.move(to: generation, now: now)
    }

    /// The side's greeting went out: the move.
    mutating func sideGreetingSent(generation: Int, now: Int) -> SessionAction? {
        guard let side = self.state.side, side.generation == generation else {
            return self.closedSideEvent(generation)
        }
        guard case .opening(_, _, greeting: true) = side else { return SessionAction.none }
        return self.move(to: generation, now: now)
    }

    /// The side's greeting could not be written: its transport is failing, the handover is abandoned.
    mutating func sideGreetingFailed(generation: Int, now: Int) -> SessionAction? {
        guard let side = self.state.side, side.generation == generation else {
            return self.closedSideEvent(generation)
        }
        guard case .opening(_, _, greeting: true) = side else { return SessionAction.none }
        return self.abandon(generation, reason: .receiveFailed, code: nil, close: true, now: now)
    }

    /// The side's transport reported its end.
    mutating func sideEnded(generation: Int, end: TransportEnd, now: Int) -> SessionAction? {
        if let closed = self.state.closedSides.firstIndex(of: generation) {
            self.state.closedSides.remove(at: closed)
            return SessionAction.none  // the end of a close the machine ordered (recorded then)
        }
        guard let side = self.state.side, side.generation == generation else { return nil }
        self.state.side = nil
        switch side {
        case .opening:
            return self.abandon(generation, reason: CloseReason(end), code: Self.code(of: end), close: false, now: now)
        case .draining:
            // The old connection ended on its own during the drain: what it was written before the move is lost.
            let putBack = self.lost(generation)
            self.record(.closed(reason: CloseReason(end), code: Self.code(of: end)), now: now, from: self.state.phase,
                        generation: generation)
            return putBack ? self.nextWrite(now: now) : SessionAction.none  // acknowledged sends go on the new one
        case .closing:
            return SessionAction.none  // the end of the close the machine ordered (recorded then)
        }
    }

    /// A message read on the side: delivered while it exists, recorded under its generation.
    mutating func sideMessage(generation: Int, bytes: Int, now: Int) -> MessageDelivery? {
        guard self.isSide(generation) else { return nil }
        if self.configuration.recordsMessages {
            self.record(.message(bytes: bytes), now: now, from: self.state.phase, generation: generation)
        }
        return .deliver
    }

    /// The side's deadline or the end of the drain.
    mutating func sideTimerFired(now: Int) -> SessionAction {
        switch self.state.side {
        case .opening(let generation, let deadline, _)? where now >= deadline:
            return self.abandon(generation, reason: .connectTimeout, code: Int(Self.goingAway), close: true, now: now)
        case .draining(let old, let until)? where now >= until:
            return self.closeSide(old, reason: .handedOver, now: now)
        case .opening?, .draining?, .closing?, nil:
            return .none
        }
    }

    // MARK: - The session's own connection during a handover

    /// The session's connection ends (`closed`: the machine closes it, with `code`) while the side is opening: the
    /// side becomes the session's connection attempt, as after a path-driven reconnect. Nil without an opening side.
    mutating func sessionLeftBeforeTheMove(
        reason: CloseReason, code: Int?, outcome: RequestOutcome, closed: Bool, now: Int
    ) -> SessionAction? {
        guard case .opening(let new, let deadline, let greeting)? = self.state.side,
              let old = self.state.stage.connection
        else {
            return nil
        }
        self.connectionLeft(outcome: outcome, now: now)
        self.state.side = closed ? .closing(generation: old.generation) : nil
        self.state.stage = .live(.connecting(deadline: deadline, greeting: greeting))
        self.record(.closed(reason: reason, code: code), now: now, from: .open, generation: old.generation)
        self.state.generation = new
        self.record(.handover(.oldEndedFirst), now: now, from: .open)
        guard closed else { return SessionAction.none }
        return .closeTransport(generation: old.generation, reason: reason, code: Self.goingAway)
    }

    /// The session's connection ended or is being closed during the drain: the old one goes too.
    mutating func closeDrainingSide(now: Int) -> SessionAction {
        guard case .draining(let old, _)? = self.state.side else { return .none }
        return self.closeSide(old, reason: .handedOver, now: now)
    }

    /// Stop or background: the side is closed with `reason` (`code`), whatever it was doing.
    mutating func closeSideForGood(reason: CloseReason, code: UInt16, now: Int) -> SessionAction {
        switch self.state.side {
        case .opening(let generation, _, _)?, .draining(let generation, _)?:
            return self.closeSide(generation, reason: reason, code: code, now: now)
        case .closing?, nil:
            return .none
        }
    }

    // MARK: - Steps

    /// The side is open and greeted: the session moves to it, the old connection drains.
    private mutating func move(to new: Int, now: Int) -> SessionAction {
        guard case .live(.open(let old)) = self.state.stage else {
            // Not open any more (kept in the background closes the side first): nothing to move from.
            return self.abandon(new, reason: .handedOver, code: Int(Self.goingAway), close: true, now: now)
        }
        self.state.stage = .live(.open(self.newConnection(new, now: now)))
        self.state.generation = new
        self.state.side = .draining(
            generation: old.generation, until: Self.adding(self.timing.switchDrain ?? 0, to: now))
        self.state.connectivity.recordOutcome(.success)
        self.record(.handover(.moved), now: now, from: .open)
        return self.nextWrite(now: now)  // the outbox goes on on the new connection
    }

    /// The side failed before the move: the session stays on its connection and probes it.
    private mutating func abandon(
        _ new: Int, reason: CloseReason, code: Int?, close: Bool, now: Int
    ) -> SessionAction {
        self.state.side = close ? .closing(generation: new) : nil
        self.record(.closed(reason: reason, code: code), now: now, from: self.state.phase, generation: new)
        self.record(.handover(.abandoned), now: now, from: self.state.phase, generation: new)
        let closing: SessionAction =
            close ? .closeTransport(generation: new, reason: reason, code: Self.goingAway) : .none
        return self.both(closing, self.probe(now: now))
    }

    /// Closes the side's transport: it is `.closing` until its end.
    private mutating func closeSide(
        _ generation: Int, reason: CloseReason, code: UInt16 = 1001, now: Int
    ) -> SessionAction {
        self.state.side = .closing(generation: generation)
        self.record(.closed(reason: reason, code: Int(code)), now: now, from: self.state.phase, generation: generation)
        return .closeTransport(generation: generation, reason: reason, code: code)
    }

    /// The close code or HTTP status a transport's end carries.
    static func code(of end: TransportEnd) -> Int? {
        switch end {
        case .peerClosed(let code): code.map { Int($0) }
        case .handshakeRejected(let status, _), .proxyRejected(let status, _), .redirectFailed(_, let status): status
        case .protocolViolation(let code): Int(code)
        case .connectFailed, .handshakeInvalid, .tlsFailed, .receiveFailed, .closedLocally, .proxyUnreachable,
            .socksRejected, .requestFailed:
            nil
        }
    }
}
