/// What the session machine tells the driver about queued messages and parked sends, besides its action: drained
/// with `SessionMachine.drainOutboxNotices(_:)` after every event, oldest first.
public enum OutboxNotice: Equatable, Sendable {
    /// The queued message of `ticket` left the outbox without being written in full: report it, forget its payload.
    case dropped(ticket: Int, reason: OutboxDropReason)
    /// The `count` `.now` sends parked behind the outbox (all of them, first first) will not be written: their
    /// connection is no longer the open one. Each throws `notOpen`; nothing of them was sent.
    case parkedSendsRefused(count: Int)
}
