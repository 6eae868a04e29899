import Testing
import TetherTesting
import Foundation
import Synchronization
@testable import Tether
@testable import TetherWire

/// The client's event sequence: every event once, in order, to the newest reader; a cancelled reader detaches and
/// takes nothing, a newer one takes over, and the client's end as `AsyncStream` has it.
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

    /// Starts a task that reads `count` events. Its result arrives on the returned stream, which the test awaits
    /// under a deadline, so that a broken channel fails the test instead of hanging it.
    func startReader(_ channel: EventChannel, count: Int) -> (task: Task<Void, Never>, result: AsyncStream<[Int?]>) {
        let (result, sink) = AsyncStream.makeStream(of: [Int?].self)
        let task = Task {
            var events = WebSocketEvents(channel: channel).makeAsyncIterator()
            var read: [Int?] = []
            for _ in 0..<count {
                read.append(self.milliseconds(await events.next()))
            }
            sink.yield(read)
        }
        return (task, result)
    }

    func read(_ result: AsyncStream<[Int?]>) async -> [Int?]? {
        await withDeadline { await result.first { _ in true } }
    }

    @Test func aParkedReaderGetsEachEventYieldedWhileItWaits() async {
        var (channel, parked) = self.parkingChannel()
        let reader = self.startReader(channel, count: 3)
        for index in 0..<3 {
            await parked.next()
            channel.yield(self.rtt(index))
        }
        #expect(await self.read(reader.result) == [0, 1, 2])
    }

    @Test func finishingWakesAParkedReaderWithTheEnd() async {
        var (channel, parked) = self.parkingChannel()
        let reader = self.startReader(channel, count: 1)
        await parked.next()
        channel.finish()
        #expect(await self.read(reader.result) == [nil])
    }

    /// A view's `.task` cancelled while it waits: its loop ends, and what comes next waits for the next reader.
    @Test func cancellingAParkedReaderDetachesItAndTheNextReaderGetsWhatCameAfter() async {
        var (channel, parked) = self.parkingChannel()
        let reader = self.startReader(channel, count: 1)
        await parked.next()
        reader.task.cancel()
        #expect(await self.read(reader.result) == [nil])
        channel.yield(self.rtt(1))
        channel.yield(self.rtt(2))
        #expect(await self.read(self.startReader(channel, count: 2).result) == [1, 2])
    }

    /// A cancelled task takes nothing, not even what is buffered: that is the next reader's.
    @Test func aCancelledTaskTakesNothingAndTheBufferedEventsWaitForTheNextReader() async {
        let channel = EventChannel()
        channel.yield(self.rtt(1))
        channel.yield(self.rtt(2))
        let (result, sink) = AsyncStream.makeStream(of: [Int?].self)
        Task {
            withUnsafeCurrentTask { $0?.cancel() }
            var read: [Int?] = []
            for await event in WebSocketEvents(channel: channel) {
                read.append(self.milliseconds(event))
            }
            sink.yield(read)
        }
        #expect(await self.read(result) == [])
        #expect(await self.read(self.startReader(channel, count: 2).result) == [1, 2])
    }

    /// A second reader while the first waits: the newest takes over, the first sees the end, and the events are the
    /// second's from where the first stopped. A late cancellation of the first changes nothing.
    @Test func aNewReaderTakesOverFromAParkedOneWhichSeesTheEnd() async {
        var (channel, parked) = self.parkingChannel()
        let first = self.startReader(channel, count: 2)
        channel.yield(self.rtt(1))
        await parked.next()  // the first took 1 and waits for more
        let second = self.startReader(channel, count: 2)
        #expect(await self.read(first.result) == [1, nil])
        await parked.next()  // the second waits
        first.task.cancel()
        channel.yield(self.rtt(2))
        channel.yield(self.rtt(3))
        #expect(await self.read(second.result) == [2, 3])
    }

    /// An iterator that was replaced stays ended: asking it again gives nil and takes nothing.
    @Test func aReplacedIteratorStaysEndedAndTakesNothing() async {
        let channel = EventChannel()
        let events = WebSocketEvents(channel: channel)
        var old = events.makeAsyncIterator()
        channel.yield(self.rtt(1))
        #expect(self.milliseconds(await old.next()) == 1)
        var new = events.makeAsyncIterator()
        channel.yield(self.rtt(2))
        #expect(await old.next() == nil)
        #expect(self.milliseconds(await new.next()) == 2)
    }

    /// Readers that come and go any number of times, some cancelled while they wait, some replaced: every event is
    /// taken once, in order, by exactly one reader, and none is lost.
    @Test func readersThatComeAndGoTakeEveryEventOnceInOrder() async {
        var (channel, parked) = self.parkingChannel()
        var taken: [Int] = []
        var next = 0
        for round in 0..<50 {
            let reader = self.startReader(channel, count: 3)
            for _ in 0..<(round % 3) {
                await parked.next()
                channel.yield(self.rtt(next))
                next += 1
            }
            await parked.next()
            if round.isMultiple(of: 2) {
                reader.task.cancel()
            } else {
                _ = channel.attachReader()  // replaced by an iterator that never reads
            }
            taken += (await self.read(reader.result) ?? []).compactMap { $0 }
        }
        #expect(taken == Array(0..<next))
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

// The channel's weight and its watermarks (what holds the client's reading).
extension WebSocketEventsTests {
    @Test func bufferingAboveTheHighWatermarkHoldsUntilTheReaderBringsItToTheLowOne() async {
        let channel = EventChannel(watermarks: Watermarks(high: 1_000, low: 300))
        let released = Released()
        channel.onHoldChange { released.count.add(1, ordering: .relaxed) }
        let message = WebSocketEvent.message(.binary(Data(count: 200 - EventChannel.eventOverhead)), generation: 1)
        #expect(EventChannel.weight(of: message) == 200)
        var crossings: [Bool] = []
        for _ in 0..<6 { crossings.append(channel.yield(message)) }
        #expect(crossings == [false, false, false, false, false, true])  // 1,200 > 1,000 at the sixth
        #expect(channel.isHeld)
        let events = WebSocketEvents(channel: channel)
        var iterator = events.makeAsyncIterator()
        for _ in 0..<4 { _ = await iterator.next() }  // 400 left: still above the low watermark
        #expect(channel.isHeld && released.count.load(ordering: .relaxed) == 0)
        _ = await iterator.next()  // 200 left
        #expect(!channel.isHeld && released.count.load(ordering: .relaxed) == 1)
        #expect(channel.peakWeight == 1_200)
    }

    @Test func anEventWeighsItsSlotAndAMessageItsPayloadBeside() {
        let slot = MemoryLayout<WebSocketEvent?>.stride  // a slot of the buffer, from which events are moved out
        #expect(slot >= 64)
        #expect(EventChannel.weight(of: .roundTrip(milliseconds: 3)) == slot)
        #expect(EventChannel.weight(of: .message(.text("héllo"), generation: 1)) == 6 + slot)
    }
}

/// How often a hold was released.
private final class Released: Sendable {
    let count = Atomic<Int>(0)
}

extension WebSocketEventsTests {
    @Test func aSteadyFeedThatNeverEmptiesTheBufferDoesNotKeepTheEventsAlreadyRead() async {
        let channel = EventChannel()
        let events = WebSocketEvents(channel: channel)
        var iterator = events.makeAsyncIterator()
        var next = 0
        var inOrder = true
        for round in 0..<50 {
            for index in 0..<1_000 { channel.yield(.roundTrip(milliseconds: round * 1_000 + index)) }
            for _ in 0..<900 {  // the reader falls 100 events further behind every round
                guard case .roundTrip(let value)? = await iterator.next() else { inOrder = false; break }
                inOrder = inOrder && value == next
                next += 1
            }
        }
        // 50,000 events went through; what is kept is what is unread (5,000), and at most as much again.
        #expect(channel.storedSlots <= 2 * 5_000, "\(channel.storedSlots) slots")
        while next < 50_000, case .roundTrip(let value)? = await iterator.next() {
            inOrder = inOrder && value == next
            next += 1
        }
        #expect(inOrder && next == 50_000)
    }
}

/// A channel whose yields come on a thread that runs in turns (the client's event loop): the waiting reader is woken
/// once at the end of the turn, with everything yielded in it, and not before.
@Suite struct WebSocketEventsBatchingTests {
    /// A stand-in for an event loop: "on its thread" while `inTurn`, and the work deferred to the end of the turn
    /// runs when the test says the turn ends.
    final class Turns: WakeBatcher {
        private let state = Mutex((inTurn: true, deferred: [@Sendable () -> Void]()))

        var isCurrent: Bool { self.state.withLock { $0.inTurn } }
        var deferredCount: Int { self.state.withLock { $0.deferred.count } }

        func deferToEndOfTurn(_ work: @escaping @Sendable () -> Void) {
            self.state.withLock { $0.deferred.append(work) }
        }

        func endTurn() {
            let deferred = self.state.withLock { state in
                let deferred = state.deferred
                state.deferred.removeAll()
                return deferred
            }
            for work in deferred { work() }
        }

        func leave() { self.state.withLock { $0.inTurn = false } }
    }

    func rtt(_ event: WebSocketEvent?) -> Int? {
        guard case .roundTrip(let milliseconds) = event else { return nil }
        return milliseconds
    }

    /// A channel batched by `turns` and a task reading `count` events from it, once that task waits for the first;
    /// what it read arrives on the returned stream.
    func parkedReader(batchedBy turns: Turns, count: Int) async -> (EventChannel, AsyncStream<[Int?]>) {
        let (parked, parkedSink) = AsyncStream.makeStream(of: Void.self)
        let channel = EventChannel(batcher: turns, readerParked: { parkedSink.yield() })
        let (result, sink) = AsyncStream.makeStream(of: [Int?].self)
        Task {
            var events = WebSocketEvents(channel: channel).makeAsyncIterator()
            var read: [Int?] = []
            for _ in 0..<count { read.append(self.rtt(await events.next())) }
            sink.yield(read)
            sink.finish()
        }
        _ = await withDeadline { await parked.first { _ in true } }  // bounded: a reader that never parks fails
        return (channel, result)
    }

    @Test func aParkedReaderIsWokenOnceAtTheEndOfTheTurnWithEverythingYieldedInIt() async {
        let turns = Turns()
        let (channel, result) = await self.parkedReader(batchedBy: turns, count: 3)
        channel.yield(.roundTrip(milliseconds: 1))
        channel.yield(.roundTrip(milliseconds: 2))
        channel.yield(.roundTrip(milliseconds: 3))
        #expect(turns.deferredCount == 1, "one wake-up for the turn, however many events")
        #expect(channel.storedSlots == 3, "the reader has not taken any yet")
        turns.endTurn()
        let read = await withDeadline { await result.first { _ in true } }
        #expect(read == [1, 2, 3])
    }

    @Test func aChannelFinishedBeforeTheTurnEndsStillDeliversWhatWasYieldedThenTheEnd() async {
        let turns = Turns()
        let (channel, result) = await self.parkedReader(batchedBy: turns, count: 3)
        channel.yield(.roundTrip(milliseconds: 7))
        channel.yield(.roundTrip(milliseconds: 8))
        channel.finish()
        turns.endTurn()  // the deferred wake-up finds the reader resumed by `finish`: nothing more
        let read = await withDeadline { await result.first { _ in true } }
        #expect(read == [7, 8, nil])
    }

    @Test func offTheBatchersThreadTheReaderIsWokenAtOnce() async {
        let turns = Turns()
        turns.leave()
        let (channel, result) = await self.parkedReader(batchedBy: turns, count: 1)
        channel.yield(.roundTrip(milliseconds: 5))
        #expect(turns.deferredCount == 0)
        let read = await withDeadline { await result.first { _ in true } }
        #expect(read == [5])
    }
}

/// The weight of what a parked reader is handed at the end of a turn: an event yielded to a waiting reader is that
/// reader's, at the end of the turn as it is at once off the loop, and only what waits behind it counts against the
/// watermarks (a hold the client was never told of would be released for nothing, and would hide a crossing).
extension WebSocketEventsBatchingTests {
    /// A message event of `weight` against the watermarks (its payload and its slot).
    func message(weighing weight: Int) -> WebSocketEvent {
        .message(.binary(Data(count: weight - EventChannel.eventOverhead)), generation: 1)
    }

    /// A channel with `watermarks`, batched by `turns`, whose hold changes outside `yield` are counted in `changes`,
    /// and a task reading one event from it, once that task waits for it.
    func parkedReaderOfOne(
        batchedBy turns: Turns, watermarks: Watermarks, changes: HoldChanges
    ) async -> (EventChannel, Task<WebSocketEvent?, Never>) {
        let (parked, parkedSink) = AsyncStream.makeStream(of: Void.self)
        let channel = EventChannel(watermarks: watermarks, batcher: turns, readerParked: { parkedSink.yield() })
        channel.onHoldChange { changes.count.add(1, ordering: .relaxed) }
        let reader = Task {
            var events = WebSocketEvents(channel: channel).makeAsyncIterator()
            return await events.next()
        }
        _ = await withDeadline { await parked.first { _ in true } }  // bounded: a reader that never parks fails
        return (channel, reader)
    }

    @Test func aMessageAboveTheHighWatermarkForAParkedReaderIsHandedOverWithoutAHold() async {
        let turns = Turns()
        let changes = HoldChanges()
        let (channel, reader) = await self.parkedReaderOfOne(
            batchedBy: turns, watermarks: Watermarks(high: 1_000, low: 300), changes: changes)
        #expect(!channel.yield(self.message(weighing: 1_500)))
        #expect(!channel.isHeld, "the message is the waiting reader's: nothing is behind")
        turns.endTurn()
        let taken: WebSocketEvent?? = await withDeadline { await reader.value }
        #expect(taken??.bufferWeight == 1_500)
        #expect(!channel.isHeld && changes.count.load(ordering: .relaxed) == 0, "no hold, so nothing to release")
        #expect(channel.peakWeight == 0)
    }

    @Test func whatWaitsBehindTheMessageForAParkedReaderHoldsOnceAboveTheHighWatermark() async {
        let turns = Turns()
        let changes = HoldChanges()
        let (channel, reader) = await self.parkedReaderOfOne(
            batchedBy: turns, watermarks: Watermarks(high: 1_000, low: 300), changes: changes)
        var crossings = [channel.yield(self.message(weighing: 1_500))]
        for _ in 0..<6 { crossings.append(channel.yield(self.message(weighing: 200))) }
        // The reader's message does not count; the sixth behind it puts 1,200 above 1,000: the client is told.
        #expect(crossings == [false, false, false, false, false, false, true])
        turns.endTurn()
        _ = await withDeadline { await reader.value }
        #expect(channel.isHeld && channel.peakWeight == 1_200)
        var next = WebSocketEvents(channel: channel).makeAsyncIterator()
        for _ in 0..<4 { _ = await next.next() }  // 400 left: still above the low watermark
        #expect(channel.isHeld && changes.count.load(ordering: .relaxed) == 0)
        _ = await next.next()  // 200 left: the hold ends
        #expect(!channel.isHeld && changes.count.load(ordering: .relaxed) == 1)
    }

    /// A reader cancelled before the end of the turn never takes the message: it waits for the next reader and counts
    /// from then on, and above the high watermark the client is told that reading is held.
    @Test func aParkedReaderThatLeavesBeforeTheTurnEndsLeavesItsMessageCountedAndHeld() async {
        let turns = Turns()
        let changes = HoldChanges()
        let (channel, reader) = await self.parkedReaderOfOne(
            batchedBy: turns, watermarks: Watermarks(high: 1_000, low: 300), changes: changes)
        #expect(!channel.yield(self.message(weighing: 1_500)))
        reader.cancel()
        let taken: WebSocketEvent?? = await withDeadline { await reader.value }
        #expect(taken != nil && taken! == nil, "a cancelled reader takes nothing")
        #expect(channel.isHeld && changes.count.load(ordering: .relaxed) == 1 && channel.peakWeight == 1_500)
        turns.endTurn()  // the deferred wake-up finds no reader: nothing happens
        var next = WebSocketEvents(channel: channel).makeAsyncIterator()
        #expect(await next.next().map { EventChannel.weight(of: $0) } == 1_500)
        #expect(!channel.isHeld && changes.count.load(ordering: .relaxed) == 2)
    }
}

/// How often a channel's hold changed other than by `yield`.
final class HoldChanges: Sendable {
    let count = Atomic<Int>(0)
}
