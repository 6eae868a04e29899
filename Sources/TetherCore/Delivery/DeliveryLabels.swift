/// What the app's reading of a received message says about delivery (`SessionMachine.messageReceived(generation:
/// bytes:labels:now:)`): the acknowledged sends it acknowledges, whether it is for the app at all, and its place in
/// a feed.
public struct DeliveryLabels: Equatable, Sendable {
    /// The ids of acknowledged sends this message acknowledges (none: it acknowledges nothing).
    public var acknowledges: [String]
    /// False for a message that only carries acknowledgements: it is not delivered.
    public var forApp: Bool
    /// The stream and sequence number of a feed message; nil for a message of no feed.
    public var feed: FeedPosition?

    public init(acknowledges: [String] = [], forApp: Bool = true, feed: FeedPosition? = nil) {
        self.acknowledges = acknowledges
        self.forApp = forApp
        self.feed = feed
    }
}

/// A message's place in a feed: the stream it belongs to and its sequence number there (numbers follow each other
/// by one within a stream).
public struct FeedPosition: Equatable, Hashable, Sendable, CustomStringConvertible {
    public var stream: String
    public var sequence: UInt64

    public init(stream: String, sequence: UInt64) {
        self.stream = stream
        self.sequence = sequence
    }

    /// `stream#sequence`, for example `prices#42`.
    public var description: String { "\(self.stream)#\(self.sequence)" }
}
