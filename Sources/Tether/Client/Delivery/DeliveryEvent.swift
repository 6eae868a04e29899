import TetherCore

/// What became of an acknowledged send, or a gap in a feed (`WebSocketEvent.delivery`).
public enum DeliveryEvent: Sendable, Equatable, CustomStringConvertible {
    /// The server acknowledged the send of `id`, which was written `writes` times (more than once when a
    /// connection it went out on ended before the acknowledgement came).
    case acknowledged(id: String, writes: Int)
    /// The send of `id` was not acknowledged within its `expiresAfter` and is not written again. After at least one
    /// write (`writes`) the server may have it.
    case expired(id: String, WebSocketMessage, writes: Int)
    /// The client gave up on the send of `id` after `writes` writes: `reason` says why. After at least one write
    /// the server may have it.
    case gaveUp(id: String, WebSocketMessage, writes: Int, reason: DeliveryGiveUpReason)
    /// A feed skipped numbers: the message after `lastDelivered` came with `firstReceived`. The numbers between
    /// were not delivered (a number inside the gap that still arrives later is delivered then).
    case gap(FeedGap)

    /// A description safe for logs: ids and numbers, message bodies reduced to their size.
    public var description: String {
        switch self {
        case .acknowledged(let id, let writes): "acknowledged \(id) after \(writes) writes"
        case .expired(let id, let message, let writes):
            "expired \(id) (\(message.byteCount) bytes) after \(writes) writes"
        case .gaveUp(let id, let message, let writes, let reason):
            "gave up \(id) (\(message.byteCount) bytes) after \(writes) writes: \(reason)"
        case .gap(let gap): "gap in \(gap)"
        }
    }
}
