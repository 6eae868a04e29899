/// What the session machine tells the driver about acknowledged sends and feeds, besides its action: drained with
/// `SessionMachine.drainDeliveryNotices(_:)` after every event, oldest first.
public enum DeliveryNotice: Equatable, Sendable {
    /// The acknowledged send of `ticket` (`id`) was acknowledged after `writes` writes: forget its payload.
    case acknowledged(ticket: Int, id: String, writes: Int)
    /// The acknowledged send of `ticket` waited longer than its expiry without an acknowledgement: it is not written
    /// again; after at least one write the server may have it. Forget its payload after reporting it.
    case expired(ticket: Int, id: String, writes: Int)
    /// The machine gave up on the acknowledged send of `ticket` after `writes` writes, for `reason`. Forget its
    /// payload after reporting it.
    case gaveUp(ticket: Int, id: String, writes: Int, reason: DeliveryGiveUpReason)
    /// A gap opened in a feed: numbers were skipped (see `FeedGap`).
    case gap(FeedGap)
}

/// Why the session gave up on an acknowledged send (`DeliveryNotice.gaveUp`).
public enum DeliveryGiveUpReason: Equatable, Hashable, Sendable, CustomStringConvertible {
    /// It was written `DeliverySettings.maximumWrites` times, and each time its connection ended before the
    /// acknowledgement came.
    case writeLimit
    /// The session was stopped before it was acknowledged.
    case stopped
    /// The connection refused it, larger than the transport sends; it was never written.
    case tooLarge

    /// The case as Swift spells it (`writeLimit`).
    public var description: String {
        switch self {
        case .writeLimit: "writeLimit"
        case .stopped: "stopped"
        case .tooLarge: "tooLarge"
        }
    }
}

/// Numbers a feed skipped: the message after `lastDelivered` in `stream` came with `firstReceived`, more than one
/// further. The numbers between are missing; one that still arrives later (from another connection) is delivered.
public struct FeedGap: Equatable, Hashable, Sendable, CustomStringConvertible {
    public var stream: String
    /// The highest number delivered before the gap.
    public var lastDelivered: UInt64
    /// The first number received after it.
    public var firstReceived: UInt64

    public init(stream: String, lastDelivered: UInt64, firstReceived: UInt64) {
        self.stream = stream
        self.lastDelivered = lastDelivered
        self.firstReceived = firstReceived
    }

    /// How many numbers are missing.
    public var missing: UInt64 { self.firstReceived - self.lastDelivered - 1 }

    /// For example `prices: 41 then 57 (15 missing)`.
    public var description: String {
        "\(self.stream): \(self.lastDelivered) then \(self.firstReceived) (\(self.missing) missing)"
    }
}
