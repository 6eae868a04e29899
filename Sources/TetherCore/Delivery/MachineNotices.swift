/// What the session machine tells its driver besides the action, gathered between two drains: the outbox's notices
/// (`SessionMachine.drainOutboxNotices(_:)`) and, with acknowledged sends or feeds, the delivery notices
/// (`SessionMachine.drainDeliveryNotices(_:)`). Each kept in the order it happened.
struct MachineNotices: Equatable, Sendable {
    var outbox: [OutboxNotice] = []
    var delivery: [DeliveryNotice] = []

    mutating func append(_ notice: OutboxNotice) {
        self.outbox.append(notice)
    }

    mutating func append(_ notice: DeliveryNotice) {
        self.delivery.append(notice)
    }
}
