import Foundation
import Synchronization
import Testing
import TetherCore
#if os(Linux)
import TetherTestServer
#endif
@testable import Tether
import TetherTesting

/// The outbox and the open greeting, against the in-memory transport and a manual clock (and, for the wire order,
/// the real test server).
@Suite struct WebSocketClientOutboxTests {
    let clock = ManualClock()
    let transport = InMemoryTransport()

    func makeClient(
        greeting: [WebSocketMessage]? = nil, limits: Outbox<WebSocketMessage>.Limits = .init(),
        preparingGreeting: (@Sendable () async -> [WebSocketMessage])? = nil
    ) throws -> (WebSocketClient, EventRecorder) {
        var configuration = WebSocketClient.Configuration(
            url: URL(string: "ws://example.test/feed")!, pathMonitoring: .none, transport: self.transport)
        if let greeting { configuration.greeting = { greeting } }
        if let preparingGreeting { configuration.greeting = preparingGreeting }
        configuration.outboxLimits = limits
        let client = try WebSocketClient(configuration: configuration, clock: self.clock, randomSeed: 7)
        return (client, EventRecorder(client.events))
    }

    /// The next `.outboxDropped` event's message and reason.
    func nextDrop(_ probe: EventRecorder) async -> (message: WebSocketMessage, reason: OutboxDropReason)? {
        let event = await probe.next { if case .outboxDropped = $0 { true } else { false } }
        guard case .outboxDropped(let message, let reason)? = event else { return nil }
        return (message, reason)
    }

    /// Every `.outboxDropped` event recorded, in order.
    static func drops(_ snapshot: EventRecorder.Snapshot) -> [Drop] {
        snapshot.events.compactMap { event in
            guard case .outboxDropped(let message, let reason) = event else { return nil }
            return Drop(message: message, reason: reason)
        }
    }

    struct Drop: Equatable {
        var message: WebSocketMessage
        var reason: OutboxDropReason
    }

    /// Whether `count` `.now` sends come to wait for the outbox (false if they do not within the guard's time).
    static func sendsWait(_ count: Int, on client: WebSocketClient) async -> Bool {
        await withDeadline {
            await client.waitUntilSendsWaitForOutbox(count)
            return true
        } ?? false
    }

    /// The messages the client handed to `connection`, in the order it did.
    static func sent(_ connection: InMemoryConnection) -> [WebSocketMessage] {
        connection.log.compactMap { if case .send(let message) = $0 { message } else { nil } }
    }

    @Test func theGreetingGoesFirstThenTheQueueThenTheSessionIsOpen() async throws {
        let (client, probe) = try self.makeClient(greeting: [.text("auth"), .text("subscribe")])
        try await client.send(.text("q1"), policy: .queued(expiresAfter: nil))
        await client.start()
        try await client.send(.text("q2"), policy: .queued(expiresAfter: nil))
        await #expect(throws: WebSocketSendError.notOpen) { try await client.send(.text("now")) }
        let connection = try #require(await self.transport.nextConnection())
        connection.emit(.opened(subprotocol: nil))
        _ = try #require(await probe.record(.greeting))
        let open = try #require(await probe.state(.open))
        #expect(open.generation == 1)
        // Open is reported after the greeting was handed over; the queue follows it.
        var commands: [InMemoryConnection.Command?] = []
        for _ in 0..<4 { commands.append(await connection.nextCommand()) }
        #expect(commands == [.send(.text("auth")), .send(.text("subscribe")), .send(.text("q1")),
                                   .send(.text("q2"))])
        let opened = try #require(probe.records.firstIndex { $0.kind == .opened })
        let greeting = try #require(probe.records.firstIndex { $0.kind == .greeting })
        #expect(greeting < opened)
        connection.emit(.ended(.closedLocally))  // the in-memory peer: the close the stop sends is answered
        await client.stop()
    }

    @Test func aFullOutboxThrowsAtOnceAndAnExpiredMessageIsReported() async throws {
        let (client, probe) = try self.makeClient(limits: .init(count: 2, bytes: 100))
        try await client.send(.text("a"), policy: .queued(expiresAfter: .milliseconds(100)))
        try await client.send(.text("b"), policy: .queued(expiresAfter: nil))
        await #expect(throws: WebSocketSendError.outboxFull) {
            try await client.send(.text("c"), policy: .queued(expiresAfter: nil))
        }
        self.clock.advance(by: .milliseconds(100))
        try await client.send(.text("c"), policy: .queued(expiresAfter: nil))  // "a" expired: room again
        let dropped = await probe.next { if case .outboxDropped = $0 { true } else { false } }
        guard case .outboxDropped(let message, let reason)? = dropped else {
            Issue.record("no outboxDropped event")
            return
        }
        #expect(message == .text("a") && reason == .expired)
        await client.start()
        let connection = try #require(await self.transport.nextConnection())
        connection.emit(.opened(subprotocol: nil))
        let first = await connection.nextCommand()
        let second = await connection.nextCommand()
        #expect([first, second] == [.send(.text("b")), .send(.text("c"))])
        connection.emit(.ended(.closedLocally))  // the in-memory peer: the close the stop sends is answered
        await client.stop()
    }

    @Test func aQueuedMessageIsReportedWhenItExpiresWithNothingElseHappening() async throws {
        let (client, probe) = try self.makeClient()
        try await client.send(.text("late"), policy: .queued(expiresAfter: .milliseconds(300)))
        try await client.send(.text("never"), policy: .queued(expiresAfter: nil))
        try await client.send(.text("early"), policy: .queued(expiresAfter: .milliseconds(100)))
        // The earliest expiry is the third message's: the client's timer wakes for it, with no send or connection.
        self.clock.advance(by: .milliseconds(100))
        let early = await self.nextDrop(probe)
        #expect(early?.message == .text("early") && early?.reason == .expired)
        self.clock.advance(by: .milliseconds(200))
        let late = await self.nextDrop(probe)
        #expect(late?.message == .text("late") && late?.reason == .expired)
        #expect(await client.resources.timers == 0)  // "never" does not expire: nothing to wake for
        #expect(await client.state.phase == .stopped)
        let drops = probe.events.filter { if case .outboxDropped = $0 { true } else { false } }
        #expect(drops.count == 2)
    }

    @Test func anExpiryWhileConnectingLeavesTheConnectDeadlineAlone() async throws {
        let (client, probe) = try self.makeClient()
        await client.start()
        let connection = try #require(await self.transport.nextConnection())  // never opens: the deadline is at 10 s
        try await client.send(.text("a"), policy: .queued(expiresAfter: .milliseconds(100)))
        self.clock.advance(by: .milliseconds(100))
        let dropped = await self.nextDrop(probe)
        #expect(dropped?.message == .text("a") && dropped?.reason == .expired)
        #expect(await client.state.phase == .connecting)
        #expect(!probe.records.contains { $0.kind == .closed })
        // The timer went back to the machine's wake: the deadline closes the attempt on time, not earlier.
        self.clock.advance(toMilliseconds: 9_999)
        #expect(await client.state.phase == .connecting)
        self.clock.advance(toMilliseconds: 10_000)
        let closed = await probe.record(.closed)
        #expect(closed?.reason == .connectTimeout && closed?.time == 10_000)
        connection.emit(.ended(.closedLocally))  // the in-memory peer: the close is answered
        await client.stop()
    }

    // MARK: - `.now` sends never overtake queued messages

    @Test func aNowSendWhileTheQueueIsWrittenOnOpenWaitsAndGoesAfterIt() async throws {
        let (client, probe) = try self.makeClient(greeting: [.text("hello")])
        try await client.send(.text("q1"), policy: .queued(expiresAfter: nil))
        try await client.send(.text("q2"), policy: .queued(expiresAfter: nil))
        await client.start()
        let connection = try #require(await self.transport.nextConnection())
        connection.holdSends()  // each write stays in flight until released
        connection.emit(.opened(subprotocol: nil))
        #expect(await connection.nextCommand() == .send(.text("hello")))
        connection.releaseHeldSends()
        #expect(await connection.nextCommand() == .send(.text("q1")))  // in flight; q2 waits behind it
        #expect(await probe.state(.open) != nil)
        // The session is open: a `.now` send is accepted, and waits for the queue instead of overtaking it.
        let now = Task { try await client.send(.text("now")) }
        #expect(await Self.sendsWait(1, on: client), "the .now send waits for the queue")
        connection.holdSends(false)  // q1 is written; the rest follows at once
        try await now.value
        #expect(Self.sent(connection) == [.text("hello"), .text("q1"), .text("q2"), .text("now")])
        try await client.send(.text("direct"))  // the queue is written: `.now` is direct again
        #expect(Self.sent(connection).last == .text("direct"))
        connection.emit(.ended(.closedLocally))  // the in-memory peer: the close the stop sends is answered
        await client.stop()
    }

    @Test func aNowSendAfterAQueuedOneFromTheSameTaskGoesAfterIt() async throws {
        let (client, probe) = try self.makeClient()
        let connection = try await self.transport.open(client, probe)
        for round in 0..<20 {
            try await client.send(.text("queued \(round)"), policy: .queued(expiresAfter: nil))
            try await client.send(.text("now \(round)"))
        }
        let expected = (0..<20).flatMap { [WebSocketMessage.text("queued \($0)"), .text("now \($0)")] }
        #expect(Self.sent(connection) == expected)
        connection.emit(.ended(.closedLocally))
        await client.stop()
    }

    @Test func aNowSendWaitingForTheQueueThrowsNotOpenWhenTheConnectionEnds() async throws {
        let (client, probe) = try self.makeClient()
        let connection = try await self.transport.open(client, probe)
        connection.holdSends()
        try await client.send(.text("q1"), policy: .queued(expiresAfter: nil))
        #expect(await connection.nextCommand() == .send(.text("q1")))
        let now = Task { try await client.send(.text("now")) }
        #expect(await Self.sendsWait(1, on: client))
        connection.emit(.ended(.receiveFailed))  // the held write of q1 never left: it stays queued
        await #expect(throws: WebSocketSendError.notOpen) { try await now.value }
        #expect(Self.sent(connection) == [.text("q1")])
        // The next connection gets q1, first; the `.now` send was never queued.
        #expect(await probe.state(.waiting) != nil)
        self.clock.advance(by: .seconds(2))  // past the first backoff (1 s plus at most 50 % jitter)
        let next = try #require(await self.transport.nextConnection())
        next.emit(.opened(subprotocol: nil))
        #expect(await next.nextCommand() == .send(.text("q1")))
        #expect(Self.sent(next) == [.text("q1")])
        next.emit(.ended(.closedLocally))
        await client.stop()
    }

    // MARK: - `stop()` and the outbox

    @Test func stopReportsEveryWaitingMessageAsStoppedInOrder() async throws {
        let (client, probe) = try self.makeClient()
        try await client.send(.text("a"), policy: .queued(expiresAfter: nil))
        try await client.send(.text("b"), policy: .queued(expiresAfter: .seconds(60)))
        await client.start()
        let connection = try #require(await self.transport.nextConnection())  // connecting: the queue waits
        try await client.send(.text("c"), policy: .queued(expiresAfter: nil))
        let stopping = Task { await client.stop() }
        #expect(await connection.nextCommand() == .close(code: 1000, reason: "user_stopped"))
        connection.emit(.ended(.closedLocally))
        await stopping.value
        await client.waitUntilOutboxEmpty()  // at once: the outbox is empty when `stop()` returns
        let resources = await client.resources
        #expect(resources.timers == 0 && resources.writers == 0, "no expiry left to wake for, nothing writing")
        let snapshot = await probe.wait { Self.drops($0).count == 3 }
        #expect(Self.drops(try #require(snapshot)) == [
            Drop(message: .text("a"), reason: .stopped), Drop(message: .text("b"), reason: .stopped),
            Drop(message: .text("c"), reason: .stopped),
        ])
        #expect(Self.sent(connection).isEmpty)
    }

    /// How the write in flight when `stop()` is called ends.
    enum InFlightEnd: CaseIterable, Sendable {
        case written, interrupted, neverLeft
    }

    @Test(arguments: InFlightEnd.allCases)
    func aQueuedWriteInFlightAtStopIsWrittenOrReportedBeforeStopReturns(_ end: InFlightEnd) async throws {
        let (client, probe) = try self.makeClient()
        let connection = try await self.transport.open(client, probe)
        connection.holdSends()
        try await client.send(.text("q1"), policy: .queued(expiresAfter: nil))
        #expect(await connection.nextCommand() == .send(.text("q1")))  // in flight
        try await client.send(.text("q2"), policy: .queued(expiresAfter: nil))  // waits behind it
        let now = Task { try await client.send(.text("now")) }  // waits behind both
        #expect(await Self.sendsWait(1, on: client))
        let stopping = Task { await client.stop() }
        #expect(await connection.nextCommand() == .close(code: 1000, reason: "user_stopped"))
        switch end {
        case .written: connection.releaseHeldSends()
        case .interrupted: connection.releaseHeldSends(throwing: .connectionFailed)
        case .neverLeft: connection.releaseHeldSends(throwing: .notOpen)
        }
        connection.emit(.ended(.closedLocally))
        await stopping.value
        // Once `stop()` returned nothing is writing, the outbox is empty, and every message is accounted for.
        #expect(await client.resources.writers == 0)
        await #expect(throws: WebSocketSendError.notOpen) { try await now.value }
        var expected = [Drop(message: .text("q2"), reason: .stopped)]
        switch end {
        case .written: break
        case .interrupted: expected.append(Drop(message: .text("q1"), reason: .writeInterrupted))
        case .neverLeft: expected.append(Drop(message: .text("q1"), reason: .stopped))
        }
        let count = expected.count
        let snapshot = try #require(await probe.wait { Self.drops($0).count == count })
        #expect(Self.drops(snapshot) == expected)
        #expect(Self.sent(connection) == [.text("q1")])
    }

    /// A message over `maximumMessageSize` is refused as too large whatever the policy and the state: while no
    /// connection is open a `.now` send of one threw `.notOpen`, so that the app retried it once open, only to be told
    /// then that it was too large (found by the randomized suite, seed 0xBC4F021DB7B5BC99).
    @Test func aMessageOverTheLimitIsTooLargeWhateverThePolicyAndTheState() async throws {
        var configuration = WebSocketClient.Configuration(
            url: URL(string: "ws://example.test/feed")!, maximumMessageSize: 4, pathMonitoring: .none,
            transport: self.transport)
        configuration.outboxLimits = .init()
        let client = try WebSocketClient(configuration: configuration, clock: self.clock, randomSeed: 7)
        let probe = EventRecorder(client.events)
        let tooLarge = WebSocketSendError.messageTooLarge(size: 5, limit: 4)
        for policy in [SendPolicy.now, .queued(expiresAfter: nil)] {
            await #expect(throws: tooLarge, "\(policy), stopped") {
                try await client.send(.text("12345"), policy: policy)
            }
        }
        let connection = try await self.transport.open(client, probe)
        for policy in [SendPolicy.now, .queued(expiresAfter: nil)] {
            await #expect(throws: tooLarge, "\(policy), open") {
                try await client.send(.text("12345"), policy: policy)
            }
        }
        #expect(Self.sent(connection).isEmpty)
        connection.emit(.ended(.closedLocally))  // the in-memory peer: the close the stop sends is answered
        await client.stop()
    }

    @Test func aNowSendRefusedAsTooLargeBehindTheOutboxThrowsItAndTheOutboxGoesOn() async throws {
        let (client, probe) = try self.makeClient()
        let connection = try await self.transport.open(client, probe)
        connection.holdSends()
        try await client.send(.text("q1"), policy: .queued(expiresAfter: nil))
        #expect(await connection.nextCommand() == .send(.text("q1")))  // in flight
        let big = Task { try await client.send(.text("big")) }  // parked behind q1
        #expect(await Self.sendsWait(1, on: client))
        try await client.send(.text("q2"), policy: .queued(expiresAfter: nil))
        connection.releaseHeldSends()
        #expect(await connection.nextCommand() == .send(.text("big")))
        connection.releaseHeldSends(throwing: .messageTooLarge(size: 3, limit: 2))  // a transport with a lower limit
        await #expect(throws: WebSocketSendError.messageTooLarge(size: 3, limit: 2)) { try await big.value }
        #expect(await connection.nextCommand() == .send(.text("q2")))  // the same connection goes on
        connection.holdSends(false)
        await client.waitUntilOutboxEmpty()
        #expect(Self.sent(connection) == [.text("q1"), .text("big"), .text("q2")])
        let state = await client.state
        #expect(state.phase == .open && state.generation == 1)
        connection.emit(.ended(.closedLocally))  // the in-memory peer: the close the stop sends is answered
        await client.stop()
    }

    @Test func stopCancelsAGreetingBeingPreparedAndReturnsAfterIt() async throws {
        let (started, startedSink) = AsyncStream.makeStream(of: Void.self)
        let finished = Flag()
        let clock = self.clock
        let (client, _) = try self.makeClient(preparingGreeting: {
            startedSink.yield()
            try? await clock.sleep(for: .seconds(3_600))  // a token fetch that takes its time
            finished.set()
            return [.text("late")]
        })
        await client.start()
        let connection = try #require(await self.transport.nextConnection())
        connection.emit(.opened(subprotocol: nil))
        var startedIterator = started.makeAsyncIterator()
        _ = await startedIterator.next()
        let stopping = Task { await client.stop() }
        #expect(await connection.nextCommand() == .close(code: 1000, reason: "user_stopped"))
        connection.emit(.ended(.closedLocally))
        await stopping.value
        #expect(finished.isSet, "stop() returned after the greeting's task ended")
        #expect(await client.resources.writers == 0)
        #expect(Self.sent(connection).isEmpty)
        #expect(await client.state.phase == .stopped)
    }

    #if os(Linux)
    @Test func overARealSocketTheWireOrderIsGreetingThenQueueThenNow() async throws {
        let server = try TestServer(scenario: Scenario.normal.recordingPayloads())
        var configuration = WebSocketClient.Configuration(
            url: URL(string: server.url(path: "/order"))!, pathMonitoring: .none)
        configuration.greeting = { [.text("auth")] }
        let client = try WebSocketClient(configuration: configuration)
        let probe = EventRecorder(client.events)
        let queued = (0..<300).map { "queued \($0) " + String(repeating: "x", count: 1_000) }
        for text in queued {
            try await client.send(.text(text), policy: .queued(expiresAfter: nil))
        }
        await client.start()
        #expect(await probe.state(.open) != nil)
        try await client.send(.text("now"))  // as soon as the session is open, while the queue is written
        let records = try await server.waitForConnection(1, timeout: .seconds(10)) { $0.messageCount >= 302 }
        let payloads = records.messages.elements.map { String(decoding: $0.payload ?? [], as: UTF8.self) }
        #expect(payloads == ["auth"] + queued + ["now"])
        await client.stop()
        await server.stop()
    }
    #endif
}

/// A flag set once from any task.
private final class Flag: Sendable {
    private let state = Mutex(false)

    func set() {
        self.state.withLock { $0 = true }
    }

    var isSet: Bool { self.state.withLock { $0 } }
}
