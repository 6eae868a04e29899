import Testing
@testable import Tether

/// The client's event sequence: every event once, in order, to one reader; the end and cancellation as
/// `AsyncStream` has them.
@Suite struct WebSocketEventsTests {
    func rtt(_ milliseconds: Int) -> WebSocketEvent {
        .roundTrip(milliseconds: milliseconds)
    }

    func milliseconds(_ event: WebSocketEvent?) -> Int? {
        guard case .roundTrip(let milliseconds) = event else { return nil }
        return milliseconds
    }

    /// A channel whose parked reader is announced on `parked`, so that a test yields only once the reader waits.
    func parkingChannel() -> (EventChannel, AsyncStream<Void>.Iterator) {
        let (parked, sink) = AsyncStream.makeStream(of: Void.self)
        return (EventChannel(readerParked: { sink.yield() }), parked.makeAsyncIterator())
    }

    @Test func eventsBufferedBeforeReadingArriveInOrderThenTheEnd() async {
        let channel = EventChannel()
        for index in 0..<1_000 {
            channel.yield(self.rtt(index))
        }
        channel.finish()
        channel.yield(self.rtt(-1))  // after the end: dropped
        var read: [Int] = []
        for await event in WebSocketEvents(channel: channel) {
            read.append(self.milliseconds(event) ?? -2)
        }
        #expect(read == Array(0..<1_000))
    }

    @Test func aParkedReaderGetsEachEventYieldedWhileItWaits() async {
        var (channel, parked) = self.parkingChannel()
        let reader = Task {
            var events = WebSocketEvents(channel: channel).makeAsyncIterator()
            var read: [Int?] = []
            for _ in 0..<3 {
                read.append(self.milliseconds(await events.next()))
            }
            return read
        }
        for index in 0..<3 {
            await parked.next()
            channel.yield(self.rtt(index))
        }
        #expect(await reader.value == [0, 1, 2])
    }

    @Test func finishingWakesAParkedReaderWithTheEnd() async {
        var (channel, parked) = self.parkingChannel()
        let reader = Task {
            var events = WebSocketEvents(channel: channel).makeAsyncIterator()
            return await events.next()
        }
        await parked.next()
        channel.finish()
        #expect(await reader.value == nil)
    }

    @Test func cancellingAParkedReaderEndsTheSequence() async {
        var (channel, parked) = self.parkingChannel()
        let reader = Task {
            var events = WebSocketEvents(channel: channel).makeAsyncIterator()
            return await events.next()
        }
        await parked.next()
        reader.cancel()
        #expect(await reader.value == nil)
        channel.yield(self.rtt(1))  // after the end: dropped
        var events = WebSocketEvents(channel: channel).makeAsyncIterator()
        #expect(await events.next() == nil)
    }

    @Test func aCancelledReaderStillReadsWhatWasBufferedThenTheEnd() async {
        let channel = EventChannel()
        channel.yield(self.rtt(1))
        channel.yield(self.rtt(2))
        let reader = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            var read: [Int] = []
            for await event in WebSocketEvents(channel: channel) {
                read.append(self.milliseconds(event) ?? -1)
            }
            return read
        }
        #expect(await reader.value == [1, 2])
    }

    actor Consumer {
        var read: [Int] = []

        /// Reads `count` events on this actor: `next(isolation:)` resumes here, so the loop may touch `read`.
        func consume(_ events: WebSocketEvents, count: Int) async {
            var iterator = events.makeAsyncIterator()
            while self.read.count < count, let event = await iterator.next() {
                self.assertIsolated()
                guard case .roundTrip(let milliseconds) = event else { continue }
                self.read.append(milliseconds)
            }
        }
    }

    @Test func aReaderOnAnActorReadsOnIt() async {
        let channel = EventChannel()
        let consumer = Consumer()
        let reading = Task { await consumer.consume(WebSocketEvents(channel: channel), count: 500) }
        for index in 0..<500 {
            channel.yield(self.rtt(index))
        }
        await reading.value
        #expect(await consumer.read == Array(0..<500))
    }

    @Test func concurrentProducersLoseNothingAndKeepEachOnesOrder() async {
        let channel = EventChannel()
        let producers = 4
        let perProducer = 2_000
        let reader = Task {
            var read: [Int] = []
            for await event in WebSocketEvents(channel: channel) {
                read.append(self.milliseconds(event) ?? -1)
                if read.count == producers * perProducer { break }
            }
            return read
        }
        await withTaskGroup(of: Void.self) { group in
            for producer in 0..<producers {
                group.addTask {
                    for index in 0..<perProducer {
                        channel.yield(self.rtt(producer * perProducer + index))
                    }
                }
            }
        }
        let read = await reader.value
        #expect(read.count == producers * perProducer)
        for producer in 0..<producers {
            let range = (producer * perProducer)..<((producer + 1) * perProducer)
            #expect(read.filter(range.contains) == Array(range))
        }
    }
}
