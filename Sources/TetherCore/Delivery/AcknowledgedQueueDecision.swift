/// The machine's answer to an acknowledged send (`SessionMachine.acknowledgedSendQueued`).
public enum AcknowledgedQueueDecision: Equatable, Sendable {
    /// A send with the same id waits for its acknowledgement already: nothing was queued.
    case duplicate
    /// The outbox is at its limits (counting the acknowledged sends that wait for their acknowledgement): nothing
    /// was queued.
    case refused
    /// Queued under `ticket` (the driver keeps the payload under it until a delivery notice settles it); then run
    /// `action`.
    case accepted(ticket: Int, action: SessionAction)
}
