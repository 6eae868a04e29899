/// Why an acknowledged send was not queued (`WebSocketClient.send(_:id:expiresAfter:compression:)`): nothing of it
/// was sent.
public enum AcknowledgedSendError: Error, Equatable, Sendable, CustomStringConvertible {
    /// `WebSocketConfiguration.delivery.acknowledgements` is not set: nothing would ever acknowledge it.
    case notEnabled
    /// A send with this id waits for its acknowledgement already.
    case duplicateID(String)
    /// The outbox is at `outboxLimits`, counting the sends that wait for their acknowledgement.
    case outboxFull
    /// Larger than `maximumMessageSize`.
    case messageTooLarge(size: Int, limit: Int)

    public var description: String {
        switch self {
        case .notEnabled: "acknowledgements are not enabled (configuration.delivery.acknowledgements)"
        case .duplicateID(let id): "a send with id \(id) waits for its acknowledgement already"
        case .outboxFull: "the outbox is full"
        case .messageTooLarge(let size, let limit): "message of \(size) bytes above the limit of \(limit)"
        }
    }
}
