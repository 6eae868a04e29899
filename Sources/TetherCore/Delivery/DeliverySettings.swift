/// The session machine's part of the delivery options (opt-in, docs/delivery.md): acknowledged sends and resumable
/// feeds. The defaults change nothing until the driver queues an acknowledged send or labels a feed message.
public struct DeliverySettings: Equatable, Sendable {
    /// An acknowledged send written this many times without an acknowledgement (each time, the connection it went
    /// out on ended first) is given up (`DeliveryGiveUpReason.writeLimit`) instead of written again: a message the
    /// server cannot take (it fails on it, every time) must not go round for ever. Nil: no limit. Default 10; at
    /// least 1.
    public var maximumWrites: Int?
    /// The bounds of what the machine keeps per feed stream, and of the number of streams.
    public var feedLimits: FeedLimits
    /// Where feed streams start: the last sequence number the app delivered of each (restored from its own storage
    /// after a relaunch, say). A stream not named starts at the first message received. Default none; at most
    /// `feedLimits.maximumStreams` streams.
    public var feedPositions: [String: UInt64]

    public init(
        maximumWrites: Int? = 10, feedLimits: FeedLimits = FeedLimits(), feedPositions: [String: UInt64] = [:]
    ) {
        self.maximumWrites = maximumWrites
        self.feedLimits = feedLimits
        self.feedPositions = feedPositions
    }

    /// The first setting out of range, named under `delivery.`; nil when every one is in range.
    var settingOutOfRange: SettingOutOfRange? {
        if let maximum = self.maximumWrites, maximum < 1 {
            return SettingOutOfRange(
                setting: "delivery.acknowledgements.maximumWrites", requirement: "at least 1", value: "\(maximum)")
        }
        if self.feedLimits.maximumStreams < 1 {
            return SettingOutOfRange(
                setting: "delivery.feeds.limits.maximumStreams", requirement: "at least 1",
                value: "\(self.feedLimits.maximumStreams)")
        }
        if self.feedLimits.maximumOpenGaps < 0 {
            return SettingOutOfRange(
                setting: "delivery.feeds.limits.maximumOpenGaps", requirement: "at least 0",
                value: "\(self.feedLimits.maximumOpenGaps)")
        }
        if self.feedPositions.count > self.feedLimits.maximumStreams {
            return SettingOutOfRange(
                setting: "delivery.feeds.positions", requirement: "at most limits.maximumStreams streams",
                value: "\(self.feedPositions.count) streams")
        }
        return nil
    }
}

/// What a session keeps of its feeds: a bounded number of streams, each a bounded number of numbers.
public struct FeedLimits: Equatable, Hashable, Sendable {
    /// The most streams followed at once. A message of one more stream makes room by forgetting the stream that
    /// delivered least recently (counted in `DeliveryCounts.streamsForgotten`): a message of a forgotten stream is
    /// then delivered as the first of a new one. Default 1,000; at least 1.
    public var maximumStreams: Int
    /// The most gaps kept open per stream: a number inside an open gap that arrives later (from the other connection
    /// of a make-before-break handover, say) is delivered, once. Beyond this many, the oldest gap is closed for good
    /// (its numbers are then dropped as duplicates). Each gap is two numbers, whatever its length. Default 16; at
    /// least 0.
    public var maximumOpenGaps: Int

    public init(maximumStreams: Int = 1_000, maximumOpenGaps: Int = 16) {
        self.maximumStreams = maximumStreams
        self.maximumOpenGaps = maximumOpenGaps
    }
}
