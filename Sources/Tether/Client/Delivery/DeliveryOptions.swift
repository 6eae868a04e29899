import TetherCore

/// Acknowledged sends and resumable feeds (`WebSocketConfiguration.delivery`): opt-in, off by default. Off, nothing
/// changes on the wire or in what the client reports; see docs/delivery.md for the guarantees and for what the
/// server must do.
public struct DeliveryOptions: Sendable {
    /// Acknowledged sends (`WebSocketClient.send(_:id:expiresAfter:compression:)`): kept until the server
    /// acknowledges them, written again after the next greeting when their connection ends first. Nil (the
    /// default): off, and such a send throws `AcknowledgedSendError.notEnabled`.
    public var acknowledgements: AcknowledgementOptions?
    /// Resumable feeds: each sequence number delivered once per stream, gaps reported, the greeting told where
    /// to resume. Nil (the default): off.
    public var feeds: FeedOptions?

    public init(acknowledgements: AcknowledgementOptions? = nil, feeds: FeedOptions? = nil) {
        self.acknowledgements = acknowledgements
        self.feeds = feeds
    }

    /// Whether either is on: the client reads each received message with the app's functions only then.
    var isEnabled: Bool { self.acknowledgements != nil || self.feeds != nil }

    /// The session machine's part.
    var settings: DeliverySettings {
        DeliverySettings(
            maximumWrites: self.acknowledgements?.maximumWrites, feedLimits: self.feeds?.limits ?? FeedLimits(),
            feedPositions: self.feeds?.positions ?? [:])
    }

    /// The app's reading of one received message: its acknowledgements and its place in a feed.
    func labels(of message: WebSocketMessage) -> DeliveryLabels {
        var labels = DeliveryLabels()
        if let acknowledgement = self.acknowledgements?.read(message) {
            labels.acknowledges = acknowledgement.ids
            labels.forApp = acknowledgement.forApp
        }
        if labels.forApp, let feeds = self.feeds {
            labels.feed = feeds.read(message)
        }
        return labels
    }
}

/// How the app's protocol acknowledges a send (`DeliveryOptions.acknowledgements`).
public struct AcknowledgementOptions: Sendable {
    /// Reads a received message: the ids of the acknowledged sends it acknowledges, and whether it is for the app
    /// at all (a message that only acknowledges is not delivered). Called on the client's executor for every
    /// message received (the event loop's thread on Linux): keep it quick, reading a prefix rather than decoding
    /// the whole message.
    public var read: @Sendable (WebSocketMessage) -> Acknowledgement
    /// How many times a send may be written without an acknowledgement (each time the connection it went out on
    /// ended first) before it is given up (`DeliveryEvent.gaveUp`, `.writeLimit`): a message the server cannot take
    /// must not go round for ever. Nil: no limit. Default 10; at least 1.
    public var maximumWrites: Int?

    public init(maximumWrites: Int? = 10, read: @escaping @Sendable (WebSocketMessage) -> Acknowledgement) {
        self.read = read
        self.maximumWrites = maximumWrites
    }
}

/// What a received message says about acknowledged sends (`AcknowledgementOptions.read`).
public struct Acknowledgement: Equatable, Sendable {
    /// The ids of the sends it acknowledges.
    public var ids: [String]
    /// False for a message that only carries acknowledgements: it is not delivered as `.message`.
    public var forApp: Bool

    public init(ids: [String] = [], forApp: Bool = true) {
        self.ids = ids
        self.forApp = forApp
    }

    /// A message for the app that acknowledges nothing.
    public static let none = Acknowledgement()
}

/// How the app's protocol numbers a feed, and how it asks to resume one (`DeliveryOptions.feeds`).
public struct FeedOptions: Sendable {
    /// Reads a received message's stream and sequence number; nil for a message of no feed (delivered as always).
    /// Numbers follow each other by one within a stream. Called on the client's executor for every message
    /// received that is for the app: keep it quick.
    public var read: @Sendable (WebSocketMessage) -> FeedPosition?
    /// The messages that ask the server to resume its streams, given the last number delivered of each stream the
    /// client has seen (empty at first): sent on every open right after `WebSocketConfiguration.greeting`'s
    /// messages, before the session is reported open and before anything queued. Nil: none (a server that resumes
    /// by other means).
    public var resume: (@Sendable ([String: UInt64]) -> [WebSocketMessage])?
    /// How many streams, and how many open gaps per stream, the client keeps. Default `FeedLimits()`: 1,000 and 16.
    public var limits: FeedLimits
    /// Where streams start: the last number delivered of each, kept by the app from an earlier run (see
    /// `WebSocketClient.feedPositions`). Default none.
    public var positions: [String: UInt64]

    public init(
        limits: FeedLimits = FeedLimits(), positions: [String: UInt64] = [:],
        resume: (@Sendable ([String: UInt64]) -> [WebSocketMessage])? = nil,
        read: @escaping @Sendable (WebSocketMessage) -> FeedPosition?
    ) {
        self.read = read
        self.resume = resume
        self.limits = limits
        self.positions = positions
    }
}
