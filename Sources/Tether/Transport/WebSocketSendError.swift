/// Errors thrown to the caller of `send`.
public enum WebSocketSendError: Error, Equatable, Sendable {
    /// There is no open connection, or it ended while the send waited for room in the outbound queue; nothing of
    /// the message was sent.
    case notOpen
    /// The message is larger than the transport allows.
    case messageTooLarge(size: Int, limit: Int)
    /// The connection failed while the message was being written; it may be lost.
    case connectionFailed
    /// `.queued` only: the outbox is at its limit (`WebSocketConfiguration.outboxLimits`); nothing was queued.
    case outboxFull
}
