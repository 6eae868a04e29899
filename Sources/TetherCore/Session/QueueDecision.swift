/// The machine's answer to a message queued with `.queued`.
public enum QueueDecision: Equatable, Sendable {
    /// The outbox is at its limits: nothing was queued (`outboxFull`).
    case refused
    /// Queued under `ticket` (the driver keeps the payload under it); then run `action`.
    case accepted(ticket: Int, action: SessionAction)
}
