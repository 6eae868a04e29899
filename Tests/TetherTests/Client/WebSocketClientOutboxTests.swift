import Foundation
import Testing
import TetherCore
@testable import Tether
import TetherTesting

/// The outbox and the open greeting, against the in-memory transport and a manual clock.
@Suite struct WebSocketClientOutboxTests {
    let clock = ManualClock()
    let transport = InMemoryTransport()

    func makeClient(
        greeting: [WebSocketMessage]? = nil, limits: Outbox<WebSocketMessage>.Limits = .init()
    ) throws -> (WebSocketClient<ManualClock>, EventRecorder) {
        var configuration = WebSocketClient<ManualClock>.Configuration(
            url: URL(string: "ws://example.test/feed")!, pathMonitoring: .none, transport: self.transport)
        if let greeting { configuration.greeting = { greeting } }
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
}
