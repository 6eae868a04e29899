/// What the session machine tells the driver about the messages it sends, besides its action — queued messages,
/// parked sends, and what a connection proved it received —: drained with `SessionMachine.drainOutboxNotices(_:)`
/// after every event, oldest first.
public enum OutboxNotice: Equatable, Sendable {
    /// The queued message of `ticket` left the outbox without being written in full: report it, forget its payload.
    case dropped(ticket: Int, reason: OutboxDropReason)
    /// The `count` `.now` sends parked behind the outbox (all of them, first first) will not be written: their
    /// connection is no longer the open one. Each throws `notOpen`; nothing of them was sent.
    case parkedSendsRefused(count: Int)
    /// The pong of ping `ping` on `generation` was accepted: every message written to that connection before the
    /// ping was sent reached the peer (TCP delivers in order, and the peer answered what came after them). The
    /// driver forgets them (see `UnconfirmedWrites`).
    case provedAlive(generation: Int, ping: UInt64)
    /// The connection of `generation` is lost — the machine gave up on it (a pong, probe or connect timeout, a
    /// failed ping or greeting), it ended without the machine closing it, or a close the machine ordered (stop,
    /// background, the end of a handover's drain) ended other than answered (`TransportEnd.closedLocally`) —: the
    /// messages written to it since its last proof of life may not have arrived. The driver reports them; nothing is
    /// sent again. Not sent for a close the peer answered: the answer proves delivery.
    case connectionLost(generation: Int)
}
