/// Acknowledged sends (docs/delivery.md): queued messages with an id that the machine keeps after their write until
/// the server acknowledges them, and writes again, in the order they were queued and after the greeting, on the next
/// connection when the one they went out on ends first. The rules of each send are the outbox's child
/// (`AcknowledgementLedger`); here is when the session hands it the facts: a send queued, acknowledgements read
/// (`messageReceived(generation:bytes:labels:now:)`), a connection lost (the verdict that also reports unconfirmed
/// writes) or ended.
extension SessionMachine {
    /// An acknowledged send of `bytes` with the app's `id`, expiring `expiresAfter` ms from now (nil: never): refused
    /// when the outbox is at its limits, `.duplicate` when a send of that id waits still; else queued with a ticket
    /// and written as a queued message is. Its outcome comes as a delivery notice: `.acknowledged`, `.expired` or
    /// `.gaveUp`.
    public mutating func acknowledgedSendQueued(
        id: String, bytes: Int, expiresAfter: Int?, now: Int
    ) -> AcknowledgedQueueDecision {
        guard !self.state.outgoing.acknowledgements.isPending(id: id) else { return .duplicate }
        guard let ticket = self.state.outgoing.enqueueAcknowledged(
            id: id, bytes: bytes, expiresAt: Self.expiry(after: expiresAfter, now: now), now: now,
            notices: &self.outboxNotices)
        else {
            return .refused
        }
        return .accepted(ticket: ticket, action: self.nextWrite(now: now))
    }

    /// Hands every delivery notice since the last drain to `body`, oldest first.
    public mutating func drainDeliveryNotices(_ body: (DeliveryNotice) -> Void) {
        guard !self.outboxNotices.delivery.isEmpty else { return }
        for notice in self.outboxNotices.delivery { body(notice) }
        self.outboxNotices.delivery.removeAll(keepingCapacity: true)
    }

    /// What acknowledged sends and feeds did so far.
    public var deliveryCounts: DeliveryCounts {
        var counts = self.state.feeds.counts
        let acknowledgements = self.state.outgoing.acknowledgements.counts
        counts.acknowledged = acknowledgements.acknowledged
        counts.rewrites = acknowledgements.rewrites
        counts.unmatchedAcknowledgements = acknowledgements.unmatchedAcknowledgements
        return counts
    }

    /// Acknowledged sends waiting for their acknowledgement (written) or to be written (again).
    public var acknowledgedSendsPending: Int { self.state.outgoing.acknowledgements.pending.count }

    /// The expiry time of a message queued at `now` for `expiresAfter` ms, saturating; nil for none.
    static func expiry(after expiresAfter: Int?, now: Int) -> Int? {
        expiresAfter.map { Self.adding(max(0, $0), to: now) }
    }

    /// The connection of `generation` is lost (the machine gave up on it, or it ended without being asked): what was
    /// written to it since its last pong is unconfirmed (`.connectionLost`), and the acknowledged sends waiting on it
    /// go back into the outbox at once, to be written again on the next connection. Returns whether any went back.
    @discardableResult
    mutating func lost(_ generation: Int) -> Bool {
        self.outboxNotices.append(.connectionLost(generation: generation))
        return self.state.outgoing.connectionOver(
            generation, stopped: self.state.phase == .stopped, notices: &self.outboxNotices)
    }

    /// The connection of `generation` ended (or its events finished): acknowledged sends still waiting on it (it was
    /// closed on purpose, and its closing handshake did not bring their acknowledgement) go back into the outbox, or
    /// are given up when the session is stopped. `action` is the event's own; a write follows it when one is due on
    /// the open connection (a handover's new one).
    mutating func connectionOver(_ generation: Int, then action: SessionAction, now: Int) -> SessionAction {
        guard self.state.outgoing.connectionOver(
            generation, stopped: self.state.phase == .stopped, notices: &self.outboxNotices)
        else {
            return action
        }
        return self.both(action, self.nextWrite(now: now))
    }
}
