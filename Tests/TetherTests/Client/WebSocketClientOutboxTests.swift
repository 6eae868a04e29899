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
}
