/// What the delivery machinery did so far, counted (`SessionMachine.deliveryCounts`).
public struct DeliveryCounts: Equatable, Hashable, Sendable {
    /// Acknowledged sends the server acknowledged.
    public var acknowledged = 0
    /// Writes of acknowledged sends after their first: each a message written again on a later connection.
    public var rewrites = 0
    /// Acknowledgements that named no send waiting for one (already acknowledged, expired, given up, or unknown).
    public var unmatchedAcknowledgements = 0
    /// Received messages that only carried acknowledgements, not delivered.
    public var notForApp = 0
    /// Feed messages delivered.
    public var feedDelivered = 0
    /// Feed messages dropped because their number was delivered already (a resend, the overlap of a
    /// make-before-break handover, a server replaying after a resume).
    public var duplicatesDropped = 0
    /// Gaps reported.
    public var gaps = 0
    /// Feed messages delivered late, inside a gap reported before.
    public var gapsFilled = 0
    /// Gaps closed for good to keep `FeedLimits.maximumOpenGaps`.
    public var gapsForgotten = 0
    /// Streams forgotten to keep `FeedLimits.maximumStreams`.
    public var streamsForgotten = 0

    public init() {}
}
