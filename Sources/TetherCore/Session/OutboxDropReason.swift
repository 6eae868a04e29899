/// Why a queued message left the outbox without being written in full (`WebSocketEvent.outboxDropped`).
public enum OutboxDropReason: Equatable, Hashable, Sendable, CustomStringConvertible {
    /// It waited longer than its `expiresAfter`; it was never written.
    case expired
    /// The connection failed while it was being written: it may or may not have reached the peer, and it is not
    /// sent again (at most once).
    case writeInterrupted
    /// `stop()` was called while it waited, or the client was dropped without it; it was never written.
    case stopped
    /// The connection refused it, larger than the transport sends (a transport whose limit is below
    /// `maximumMessageSize`); it was never written.
    case tooLarge

    /// The case as Swift spells it (`expired`, `writeInterrupted`).
    public var description: String {
        switch self {
        case .expired: "expired"
        case .writeInterrupted: "writeInterrupted"
        case .stopped: "stopped"
        case .tooLarge: "tooLarge"
        }
    }
}
