import Testing
@testable import Tether

/// The broadcast behind `WebSocketClient.states`: every observer starts with the latest state, a slow one skips to
/// the newest, none holds more than one unread state, and they end with the client or their task.
@Suite struct StateBroadcastTests {
    static func state(_ generation: Int, _ phase: SessionPhase = .connecting) -> ConnectionState {
        ConnectionState(
            phase: phase, generation: generation, attempts: 0, retryAt: nil, failure: nil, lastRTT: nil,
            path: .unknown)
    }

    @Test func anObserverStartsWithTheLatestStateThenGetsEachNewOne() async {
        let broadcast = StateBroadcast(Self.state(0, .stopped))
        broadcast.publish(Self.state(1))
        var states = WebSocketStates(broadcast: broadcast).makeAsyncIterator()
        #expect(await states.next()?.generation == 1)
        let (started, sink) = AsyncStream.makeStream(of: Void.self)
        let waiting = Task {
            var iterator = WebSocketStates(broadcast: broadcast).makeAsyncIterator()
            let first = await iterator.next()?.generation
            sink.yield()
            return [first, await iterator.next()?.generation]  // the second waits for a change
        }
        _ = await started.first { _ in true }
        broadcast.publish(Self.state(2))
        #expect(await waiting.value == [1, 2])
        #expect(await states.next()?.generation == 2)
        var late = WebSocketStates(broadcast: broadcast).makeAsyncIterator()
        #expect(await late.next()?.generation == 2)
    }

    /// An observer that does not read while many states are published finds only the latest: it holds one.
    @Test func aSlowObserverSkipsTheStatesInBetweenAndEndsOnTheLatest() async {
        let broadcast = StateBroadcast(Self.state(0))
        var slow = WebSocketStates(broadcast: broadcast).makeAsyncIterator()
        var fast = WebSocketStates(broadcast: broadcast).makeAsyncIterator()
        var fastSeen: [Int] = []
        for generation in 1...1_000 {
            broadcast.publish(Self.state(generation))
            if let state = await fast.next() { fastSeen.append(state.generation) }
        }
        #expect(fastSeen == Array(1...1_000))  // it read after each: the first read was already 1
        #expect(await slow.next()?.generation == 1_000)
    }

    @Test func observersEndWithTheClientAfterWhatTheyHadNotRead() async {
        let broadcast = StateBroadcast(Self.state(0))
        var unread = WebSocketStates(broadcast: broadcast).makeAsyncIterator()
        var waiting = WebSocketStates(broadcast: broadcast).makeAsyncIterator()
        _ = await waiting.next()
        let ended = Task { await waiting.next() }
        broadcast.publish(Self.state(1))
        #expect(await ended.value?.generation == 1)
        broadcast.finish()
        #expect(await unread.next()?.generation == 1)
        #expect(await unread.next() == nil)
        broadcast.publish(Self.state(2))  // after the end: nobody gets it
        var late = WebSocketStates(broadcast: broadcast).makeAsyncIterator()
        #expect(await late.next()?.generation == 1)  // the last state there was, then the end
        #expect(await late.next() == nil)
    }

    @Test func aCancelledObserverEndsAndOthersGoOn() async {
        let broadcast = StateBroadcast(Self.state(0))
        let (parked, parkedSink) = AsyncStream.makeStream(of: Void.self)
        let cancelled = Task {
            var iterator = WebSocketStates(broadcast: broadcast).makeAsyncIterator()
            _ = await iterator.next()
            parkedSink.yield()
            return await iterator.next()
        }
        _ = await parked.first { _ in true }
        cancelled.cancel()
        #expect(await cancelled.value == nil)
        var other = WebSocketStates(broadcast: broadcast).makeAsyncIterator()
        broadcast.publish(Self.state(1))
        #expect(await other.next()?.generation == 1)
    }

    /// An iterator left with `break` stops observing: observers do not pile up in a client that lives long.
    @Test func anIteratorThatIsDroppedStopsObserving() async {
        let broadcast = StateBroadcast(Self.state(0))
        for _ in 0..<100 {
            for await state in WebSocketStates(broadcast: broadcast) where state.generation == 0 {
                break
            }
        }
        #expect(broadcast.observerCount == 0)
        do {
            var kept = WebSocketStates(broadcast: broadcast).makeAsyncIterator()
            _ = await kept.next()
            #expect(broadcast.observerCount == 1)
        }
        #expect(broadcast.observerCount == 0)
    }
}
