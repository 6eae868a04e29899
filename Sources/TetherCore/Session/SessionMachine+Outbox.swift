/// The outbox: messages queued with `.queued` and `.now` sends parked behind them (see `OutboxWriter` for the
/// rules of order). The machine names the connection every write goes to; the driver keeps the payloads under their
/// tickets, runs the writes and reports how they ended.
extension SessionMachine {
    /// Where a `.now` send goes right now.
    public var sendRoute: SendRoute { self.state.outgoing.route(openGeneration: self.state.writeGeneration) }

    /// Queued messages not settled yet: waiting in the outbox, or being written, and acknowledged sends waiting for
    /// their acknowledgement.
    public var queuedCount: Int { self.state.outgoing.queuedCount }

    /// A message of `bytes` queued, expiring `expiresAfter` ms from now (nil: never). Refused when the outbox is at
    /// its limits (the expired messages leave first); else accepted with a ticket, and written at once when the
    /// session is open and nothing is in flight.
    public mutating func messageQueued(bytes: Int, expiresAfter: Int?, now: Int) -> QueueDecision {
        guard let ticket = self.state.outgoing.enqueue(
            bytes: bytes, expiresAt: Self.expiry(after: expiresAfter, now: now), now: now,
            notices: &self.outboxNotices)
        else {
            return .refused
        }
        return .accepted(ticket: ticket, action: self.nextWrite(now: now))
    }

    /// A `.now` send found the route `.behindOutbox` (or stale): refused when not open, direct when the outbox was
    /// written meanwhile, else parked behind it.
    public mutating func nowSendArrived(now: Int) -> NowSendDecision {
        self.state.outgoing.park(openGeneration: self.state.writeGeneration)
    }

    /// The write the machine ordered on `generation` ended with `result`: the next one, if any is due.
    public mutating func writeFinished(generation: Int, result: WriteResult, now: Int) -> SessionAction {
        let stopped = self.state.phase == .stopped
        guard self.state.outgoing.finished(
            generation: generation, result: result, stopped: stopped, notices: &self.outboxNotices)
        else {
            preconditionFailure("a write finished that the machine did not order: one is in flight at a time")
        }
        return self.nextWrite(now: now)
    }

    /// Hands every outbox notice since the last drain to `body`, oldest first.
    public mutating func drainOutboxNotices(_ body: (OutboxNotice) -> Void) {
        guard !self.outboxNotices.outbox.isEmpty else { return }
        for notice in self.outboxNotices.outbox { body(notice) }
        self.outboxNotices.outbox.removeAll(keepingCapacity: true)
    }

    mutating func nextWrite(now: Int) -> SessionAction {
        self.state.outgoing.nextWrite(
            openGeneration: self.state.writeGeneration, now: now, notices: &self.outboxNotices)
    }
}
