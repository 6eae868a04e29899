/// Resumable feeds and acknowledgements on the way in (docs/delivery.md): the app reads each received message
/// (which acknowledged sends it acknowledges, whether it is for the app at all, its stream and sequence number), and
/// the machine decides what is delivered. The feed rules are `FeedLedger`'s; the greeting asks the server to resume
/// each stream after `feedPositions`.
extension SessionMachine {
    /// A message of `bytes` read on `generation`, with the app's reading of it. Its acknowledgements count whatever
    /// connection it came on (the server has those messages); then it is `.discard`ed when it is not for the app,
    /// or when it is a feed message whose number was delivered already (a duplicate, counted); a feed message that
    /// skips numbers is delivered and reports the gap (`DeliveryNotice.gap`). Otherwise as
    /// `messageReceived(generation:bytes:now:)`: delivered while its connection delivers, stale after its end.
    public mutating func messageReceived(
        generation: Int, bytes: Int, labels: DeliveryLabels, now: Int
    ) -> MessageDelivery {
        if !labels.acknowledges.isEmpty {
            self.state.outgoing.acknowledge(labels.acknowledges, notices: &self.outboxNotices)
        }
        // The rule of `messageReceived(generation:bytes:now:)`: the latest connection until its end, or a handover's.
        let delivers = self.isSide(generation)
            || (generation == self.state.generation && self.state.stage.link != .none)
        guard delivers else { return self.messageReceived(generation: generation, bytes: bytes, now: now) }
        guard labels.forApp else {
            self.state.feeds.count { $0.notForApp += 1 }
            return .discard
        }
        if let feed = labels.feed, !self.state.feeds.received(feed, notices: &self.outboxNotices) {
            return .discard  // a duplicate: counted
        }
        return self.messageReceived(generation: generation, bytes: bytes, now: now)
    }

    /// The highest sequence number delivered of each feed stream (or given in `DeliverySettings.feedPositions`):
    /// what the greeting asks the server to resume after.
    public var feedPositions: [String: UInt64] { self.state.feeds.positions }
}
