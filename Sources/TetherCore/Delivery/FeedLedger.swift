/// The session's feeds (docs/delivery.md): for each stream the highest number delivered and the gaps still open
/// below it, so that each number is delivered once. Which streams there are, and what number a message carries, is
/// the app's reading (`DeliveryLabels.feed`); what is delivered is decided here:
/// - a number above the highest delivered is delivered; when it skips numbers, a gap opens and is reported
///   (`DeliveryNotice.gap`: the stream, the highest delivered, the number received);
/// - a number at or below the highest delivered is a duplicate (a resend, the overlap of a make-before-break handover,
///   a server replaying after a resume): dropped and counted, unless it falls in an open gap, where it is delivered
///   once (late) and the gap shrinks;
/// - the first number of a stream not seen before is delivered, and starts it (no gap: nothing says where it began),
///   unless the app gave a starting position (`DeliverySettings.feedPositions`).
///
/// Bounded: at most `FeedLimits.maximumStreams` streams (the one that delivered least recently is forgotten to make
/// room) and `FeedLimits.maximumOpenGaps` gaps per stream (the oldest is closed for good): memory does not depend on
/// how many numbers pass, or how far apart.
struct FeedLedger: Equatable, Sendable {
    struct Stream: Equatable, Sendable {
        var lastDelivered: UInt64
        /// Numbers below `lastDelivered` not delivered yet, as ranges, oldest gap first.
        var open: [ClosedRange<UInt64>] = []
        /// The ledger's count of deliveries when this stream last delivered: the smallest is forgotten first.
        var touched: Int
    }

    let limits: FeedLimits
    private(set) var streams: [String: Stream] = [:]
    private(set) var counts = DeliveryCounts()
    /// Deliveries so far: the clock of `Stream.touched`.
    private var deliveries = 0

    init(limits: FeedLimits, positions: [String: UInt64]) {
        self.limits = limits
        for (stream, position) in positions {
            self.streams[stream] = Stream(lastDelivered: position, touched: 0)
        }
    }

    /// The highest number delivered of each stream: what a greeting asks the server to resume after.
    var positions: [String: UInt64] { self.streams.mapValues(\.lastDelivered) }

    /// A feed message at `position` arrived on a connection that delivers: whether to deliver it.
    mutating func received(_ position: FeedPosition, notices: inout MachineNotices) -> Bool {
        let sequence = position.sequence
        guard var stream = self.streams.removeValue(forKey: position.stream) else {
            self.makeRoom()
            self.deliveries += 1
            self.streams[position.stream] = Stream(lastDelivered: sequence, touched: self.deliveries)
            self.counts.feedDelivered += 1
            return true
        }
        defer { self.streams[position.stream] = stream }
        if sequence > stream.lastDelivered {
            if sequence - stream.lastDelivered > 1 {
                let gap = FeedGap(stream: position.stream, lastDelivered: stream.lastDelivered, firstReceived: sequence)
                notices.append(.gap(gap))
                self.counts.gaps += 1
                stream.open.append((stream.lastDelivered + 1)...(sequence - 1))
                self.keepOpenGapsBounded(&stream)
            }
            stream.lastDelivered = sequence
        } else {
            guard let index = stream.open.firstIndex(where: { $0.contains(sequence) }) else {
                self.counts.duplicatesDropped += 1
                return false
            }
            let gap = stream.open[index]
            var rest: [ClosedRange<UInt64>] = []
            if sequence > gap.lowerBound { rest.append(gap.lowerBound...(sequence - 1)) }
            if sequence < gap.upperBound { rest.append((sequence + 1)...gap.upperBound) }
            stream.open.replaceSubrange(index...index, with: rest)
            self.keepOpenGapsBounded(&stream)
            self.counts.gapsFilled += 1
        }
        self.deliveries += 1
        stream.touched = self.deliveries
        self.counts.feedDelivered += 1
        return true
    }

    /// Counts a message the machine dropped for the ledger (`DeliveryCounts` is the ledger's).
    mutating func count(_ body: (inout DeliveryCounts) -> Void) {
        body(&self.counts)
    }

    private mutating func keepOpenGapsBounded(_ stream: inout Stream) {
        let excess = stream.open.count - self.limits.maximumOpenGaps
        guard excess > 0 else { return }
        stream.open.removeFirst(excess)
        self.counts.gapsForgotten += excess
    }

    /// One more stream is about to start: at the limit, the stream that delivered least recently is forgotten.
    private mutating func makeRoom() {
        guard self.streams.count >= self.limits.maximumStreams,
              let oldest = self.streams.min(by: { $0.value.touched < $1.value.touched })?.key
        else {
            return
        }
        self.streams[oldest] = nil
        self.counts.streamsForgotten += 1
    }
}
