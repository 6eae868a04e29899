import Testing
import TetherCore

/// Transcripts of resumable feeds: each number delivered once per stream, when a gap is reported, and what the
/// greeting is told to resume from.
extension SessionMachineTests {
    static func feed(_ stream: String, _ sequence: UInt64) -> DeliveryLabels {
        DeliveryLabels(feed: FeedPosition(stream: stream, sequence: sequence))
    }

    /// Delivers `sequence` of `stream` on `generation` and returns the machine's decision.
    func receive(
        _ m: inout Machine, _ stream: String, _ sequence: UInt64, generation: Int = 1, now: Int = 200
    ) -> MessageDelivery {
        m.messageReceived(generation: generation, bytes: 8, labels: Self.feed(stream, sequence), now: now)
    }

    @Test func eachNumberIsDeliveredOncePerStreamAndADuplicateIsDroppedAndCounted() {
        var m = self.opened()
        #expect(self.receive(&m, "prices", 1) == .deliver)
        #expect(self.receive(&m, "prices", 2) == .deliver)
        #expect(self.receive(&m, "prices", 2) == .discard)
        #expect(self.receive(&m, "prices", 1) == .discard)
        #expect(self.receive(&m, "news", 2) == .deliver)  // another stream: its own numbers
        #expect(self.receive(&m, "prices", 3) == .deliver)
        #expect(m.feedPositions == ["prices": 3, "news": 2])
        #expect(m.deliveryCounts.feedDelivered == 4 && m.deliveryCounts.duplicatesDropped == 2)
        #expect(self.deliveryNotices(&m).isEmpty)
        // A message of no feed is delivered as always.
        #expect(m.messageReceived(generation: 1, bytes: 8, labels: DeliveryLabels(), now: 300) == .deliver)
    }

    @Test func aGapIsReportedWhenItOpensAndANumberInsideItThatArrivesLaterIsDeliveredOnce() {
        var m = self.opened()
        #expect(self.receive(&m, "prices", 41) == .deliver)  // the first of a stream starts it: no gap
        #expect(self.receive(&m, "prices", 45) == .deliver)
        #expect(self.deliveryNotices(&m) == [.gap(FeedGap(stream: "prices", lastDelivered: 41, firstReceived: 45))])
        #expect(m.feedPositions == ["prices": 45])
        #expect(self.receive(&m, "prices", 43) == .deliver)  // late, from another connection: inside the gap
        #expect(self.receive(&m, "prices", 43) == .discard)
        #expect(self.receive(&m, "prices", 42) == .deliver)
        #expect(self.receive(&m, "prices", 44) == .deliver)
        #expect(self.receive(&m, "prices", 44) == .discard)
        #expect(self.deliveryNotices(&m).isEmpty)  // a gap is reported once, when it opens
        let counts = m.deliveryCounts
        #expect(counts.gaps == 1 && counts.gapsFilled == 3 && counts.duplicatesDropped == 2)
    }

    @Test func theGreetingIsToldTheLastNumberDeliveredOfEachStreamAndTheServersReplayIsDeDuplicated() throws {
        var configuration = Self.noJitter
        configuration.greets = true
        var m = self.machine(configuration)
        #expect(m.start(now: 0) == .openTransport(generation: 1))
        #expect(m.transportOpened(generation: 1, now: 100) == .sendGreeting(generation: 1))
        #expect(m.feedPositions.isEmpty)  // nothing to resume: the greeting subscribes afresh
        #expect(m.greetingSent(generation: 1, now: 110) == .none)
        for sequence in UInt64(1)...5 {
            #expect(self.receive(&m, "prices", sequence) == .deliver)
        }
        #expect(m.transportEnded(generation: 1, end: .receiveFailed, now: 300) == .none)
        let retryAt = try #require(m.retryAt)
        #expect(m.timerFired(now: retryAt) == .openTransport(generation: 2))
        #expect(m.transportOpened(generation: 2, now: 1_400) == .sendGreeting(generation: 2))
        #expect(m.feedPositions == ["prices": 5])  // what the greeting asks the server to resume after
        #expect(m.greetingSent(generation: 2, now: 1_410) == .none)
        // A server that replays from an older number than asked: the repeats are dropped.
        #expect(self.receive(&m, "prices", 4, generation: 2) == .discard)
        #expect(self.receive(&m, "prices", 5, generation: 2) == .discard)
        #expect(self.receive(&m, "prices", 6, generation: 2) == .deliver)
        // One that could not fill what was missed: a gap, the numbers between never delivered.
        #expect(self.receive(&m, "prices", 9, generation: 2) == .deliver)
        #expect(self.deliveryNotices(&m) == [.gap(FeedGap(stream: "prices", lastDelivered: 6, firstReceived: 9))])
    }

    @Test func theOverlapOfAMakeBeforeBreakHandoverDeliversEachNumberOnce() {
        var (m, monitor) = self.openForHandover()
        #expect(self.receive(&m, "prices", 10, generation: 1) == .deliver)
        #expect(m.pathReported(monitor: monitor, Self.cellular, now: 1_000) == .openTransport(generation: 2))
        #expect(m.transportOpened(generation: 2, now: 1_100) == .none)
        // Both connections carry the feed for the drain, interleaved.
        let arrivals: [(generation: Int, sequence: UInt64, delivered: Bool)] = [
            (1, 11, true), (2, 11, false), (2, 12, true), (1, 12, false), (1, 13, true), (2, 13, false), (2, 14, true),
        ]
        for arrival in arrivals {
            let delivery = self.receive(&m, "prices", arrival.sequence, generation: arrival.generation, now: 1_200)
            #expect(delivery == (arrival.delivered ? .deliver : .discard), "\(arrival)")
        }
        #expect(m.deliveryCounts.duplicatesDropped == 3 && m.deliveryCounts.gaps == 0)
    }

    @Test func aStartingPositionMakesTheFirstMessageOfItsStreamAGapWhenItSkipsNumbers() {
        var configuration = Self.noJitter
        configuration.delivery.feedPositions = ["prices": 100]
        var m = self.opened(configuration)
        #expect(m.feedPositions == ["prices": 100])
        #expect(self.receive(&m, "prices", 100) == .discard)
        #expect(self.receive(&m, "prices", 103) == .deliver)
        #expect(self.deliveryNotices(&m) == [.gap(FeedGap(stream: "prices", lastDelivered: 100, firstReceived: 103))])
    }

    @Test func aStaleFeedMessageIsDiscardedAsStaleAndMovesNoPosition() {
        var m = self.opened()
        #expect(self.receive(&m, "prices", 1) == .deliver)
        #expect(m.transportEnded(generation: 1, end: .receiveFailed, now: 300) == .none)
        #expect(self.receive(&m, "prices", 2, now: 301) == .discard)  // read before the end, handled after it
        #expect(m.staleEvents == 1 && m.feedPositions == ["prices": 1])
        // A message that only acknowledges, stale: stale too.
        #expect(m.messageReceived(generation: 1, bytes: 5, labels: Self.acknowledgement("x"), now: 302) == .discard)
        #expect(m.staleEvents == 2 && m.deliveryCounts.notForApp == 0)
    }

    @Test func streamsAndOpenGapsAreBoundedTheLeastRecentStreamAndTheOldestGapForgottenFirst() {
        var configuration = Self.noJitter
        configuration.delivery.feedLimits = FeedLimits(maximumStreams: 2, maximumOpenGaps: 1)
        var m = self.opened(configuration)
        #expect(self.receive(&m, "a", 1) == .deliver)
        #expect(self.receive(&m, "b", 1) == .deliver)
        #expect(self.receive(&m, "a", 2) == .deliver)  // b is now the least recent
        #expect(self.receive(&m, "c", 1) == .deliver)
        #expect(m.feedPositions == ["a": 2, "c": 1])
        #expect(self.receive(&m, "b", 1) == .deliver)  // forgotten: starts again (a is forgotten for it)
        #expect(m.deliveryCounts.streamsForgotten == 2)

        #expect(self.receive(&m, "b", 4) == .deliver)  // gap 2...3
        #expect(self.receive(&m, "b", 7) == .deliver)  // gap 5...6: the first is closed for good
        #expect(self.receive(&m, "b", 2) == .discard)
        #expect(self.receive(&m, "b", 5) == .deliver)
        #expect(m.deliveryCounts.gaps == 2 && m.deliveryCounts.gapsForgotten == 1)
    }
}
