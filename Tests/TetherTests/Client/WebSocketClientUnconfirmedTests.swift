import Foundation
import Testing
import TetherCore
@testable import Tether
import TetherTesting

/// What a lost connection may not have delivered (`WebSocketEvent.unconfirmed`): the messages written to it since
/// its last pong, `.now` and `.queued` alike, against the in-memory transport and a manual clock (heartbeat
/// 100 ms / 1 s).
@Suite struct WebSocketClientUnconfirmedTests {
    let clock = ManualClock()
    let transport = InMemoryTransport()

    func makeClient(limits: OutboxLimits = OutboxLimits()) throws -> (WebSocketClient, EventRecorder) {
        var configuration = WebSocketClient.Configuration(
            url: URL(string: "ws://example.test/feed")!, heartbeatInterval: .milliseconds(100),
            heartbeatTimeout: .milliseconds(1_000), pathMonitoring: .none, transport: self.transport)
        configuration.unconfirmedLimits = limits
        let client = try WebSocketClient(configuration: configuration, clock: self.clock, randomSeed: 7)
        return (client, EventRecorder(client.events))
    }

    /// The next `.unconfirmed` event.
    func nextUnconfirmed(_ probe: EventRecorder) async -> UnconfirmedMessages? {
        let event = await probe.next { if case .unconfirmed = $0 { true } else { false } }
        guard case .unconfirmed(let unconfirmed)? = event else { return nil }
        return unconfirmed
    }

    /// Sends `text` and waits until the connection took it.
    func send(
        _ text: String, _ policy: SendPolicy = .now, on client: WebSocketClient, _ connection: InMemoryConnection
    ) async throws {
        try await client.send(.text(text), policy: policy)
        #expect(await connection.nextCommand() == .send(.text(text)))
    }

    @Test func theMessagesWrittenSinceTheLastPongAreNamedWhenTheConnectionBreaks() async throws {
        let (client, probe) = try self.makeClient()
        let connection = try await self.transport.open(client, probe)
        try await self.send("confirmed", on: client, connection)
        self.clock.advance(toMilliseconds: 100)
        #expect(await connection.nextCommand() == .ping(1))
        try await self.send("after the ping", on: client, connection)  // the pong of ping 1 proves nothing of it
        self.clock.advance(toMilliseconds: 120)
        connection.emit(.pong(id: 1))
        _ = await probe.record(.pong)
        try await self.send("queued", .queued(expiresAfter: nil), on: client, connection)
        try await self.send("now", on: client, connection)
        connection.emit(.ended(.receiveFailed))
        let unconfirmed = await self.nextUnconfirmed(probe)
        #expect(unconfirmed == UnconfirmedMessages(
            generation: 1, messages: [.text("after the ping"), .text("queued"), .text("now")], notKept: 0))
        // Reported before the state change that the loss causes; nothing is sent again on the next connection.
        let position = probe.events.firstIndex { if case .unconfirmed = $0 { true } else { false } }
        let waiting = probe.events.firstIndex {
            if case .stateChanged(let state, _) = $0 { state.phase == .waiting } else { false }
        }
        #expect(position != nil && waiting.map { position! < $0 } ?? true)
        let retry = try #require(probe.records.first { $0.kind == .retryScheduled }?.delay)
        self.clock.advance(toMilliseconds: 120 + retry)
        let next = try #require(await self.transport.nextConnection())
        next.emit(.opened(subprotocol: nil))
        _ = await probe.state(.open)
        #expect(next.log.isEmpty)
        #expect(client.unconfirmed.kept.count == 0)
        next.emit(.ended(.closedLocally))
        await client.stop()
    }

    @Test func aPongTimeoutReportsWhatThePingsNeverConfirmed() async throws {
        let (client, probe) = try self.makeClient()
        let connection = try await self.transport.open(client, probe)
        self.clock.advance(toMilliseconds: 100)
        #expect(await connection.nextCommand() == .ping(1))
        try await self.send("into the void", on: client, connection)
        self.clock.advance(toMilliseconds: 1_100)
        #expect(await connection.nextCommand() == .close(code: 1001, reason: "pong_timeout"))
        #expect(await self.nextUnconfirmed(probe)?.messages == [.text("into the void")])
    }

    @Test func aConnectionClosedOnPurposeOrProvedAliveReportsNothing() async throws {
        let (client, probe) = try self.makeClient()
        let connection = try await self.transport.open(client, probe)
        try await self.send("delivered", on: client, connection)
        self.clock.advance(toMilliseconds: 100)
        #expect(await connection.nextCommand() == .ping(1))
        self.clock.advance(toMilliseconds: 110)
        connection.emit(.pong(id: 1))
        _ = await probe.record(.pong)
        #expect(client.unconfirmed.kept.count == 0)  // the pong proved it delivered and it was forgotten
        try await self.send("before stop", on: client, connection)
        async let stopped: Void = client.stop()
        #expect(await connection.nextCommand() == .close(code: 1000, reason: "user_stopped"))
        connection.emit(.ended(.closedLocally))
        await stopped
        #expect(!probe.events.contains { if case .unconfirmed = $0 { true } else { false } })
        #expect(client.unconfirmed.kept.count == 0)  // forgotten with its connection
    }

    /// A close on purpose that the server does not answer (the connection reset after it, or the close timeout)
    /// proves nothing: what was written since the last pong is named as for any loss. (It was taken for an answered
    /// close and vanished unreported: found by the randomized suite, seed 0x93B1D6187AE9B89.)
    @Test func aConnectionClosedOnPurposeThatEndsUnansweredReportsWhatItMayNotHaveDelivered() async throws {
        let (client, probe) = try self.makeClient()
        let connection = try await self.transport.open(client, probe)
        try await self.send("before stop", on: client, connection)
        async let stopped: Void = client.stop()
        #expect(await connection.nextCommand() == .close(code: 1000, reason: "user_stopped"))
        connection.emit(.ended(.receiveFailed))  // reset after our close frame
        await stopped
        #expect(await self.nextUnconfirmed(probe)
            == UnconfirmedMessages(generation: 1, messages: [.text("before stop")], notKept: 0))
        #expect(client.unconfirmed.kept.count == 0)
    }

    @Test func theRecordIsBoundedAndCountsWhatItDoesNotKeep() async throws {
        let (client, probe) = try self.makeClient(limits: OutboxLimits(count: 3, bytes: 1 << 20))
        let connection = try await self.transport.open(client, probe)
        for index in 0..<10 { try await self.send("m\(index)", on: client, connection) }
        #expect(client.unconfirmed.kept == (3, 6))
        connection.emit(.ended(.receiveFailed))
        let unconfirmed = await self.nextUnconfirmed(probe)
        #expect(unconfirmed?.messages == [.text("m0"), .text("m1"), .text("m2")] && unconfirmed?.notKept == 7)
    }

    @Test func sendsFromManyTasksAreAllAccountedFor() async throws {
        let (client, probe) = try self.makeClient()
        let connection = try await self.transport.open(client, probe)
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for index in 0..<25 {
                        let policy: SendPolicy = index.isMultiple(of: 2) ? .now : .queued(expiresAfter: nil)
                        try? await client.send(.text("\(task)-\(index)"), policy: policy)
                    }
                }
            }
        }
        await client.waitUntilOutboxEmpty()
        connection.emit(.ended(.receiveFailed))
        let unconfirmed = try #require(await self.nextUnconfirmed(probe))
        let texts = { (messages: [WebSocketMessage]) in
            messages.compactMap { if case .text(let text) = $0 { text } else { nil } }
        }
        let sent = texts(connection.log.compactMap { if case .send(let message) = $0 { message } else { nil } })
        let named = texts(unconfirmed.messages)
        #expect(unconfirmed.notKept == 0 && named.count == 200 && Set(named).count == 200)
        #expect(Set(named) == Set(sent))  // in the order their writes completed: for one sender, its own
    }

    @Test func aWriteThatCompletesAfterTheVerdictIsReportedAlone() async throws {
        let (client, probe) = try self.makeClient()
        let connection = try await self.transport.open(client, probe)
        self.clock.advance(toMilliseconds: 100)
        #expect(await connection.nextCommand() == .ping(1))
        connection.holdSends()
        let sender = Task { try await client.send(text: "in flight") }
        #expect(await connection.nextCommand() == .send(.text("in flight")))
        self.clock.advance(toMilliseconds: 1_100)  // the verdict while the write is in flight
        #expect(await connection.nextCommand() == .close(code: 1001, reason: "pong_timeout"))
        connection.releaseHeldSends()  // it was handed over after all, just after the loss was reported
        try await sender.value
        #expect(await self.nextUnconfirmed(probe) == UnconfirmedMessages(
            generation: 1, messages: [.text("in flight")], notKept: 0))
    }

    @Test func aNegativeLimitIsAConfigurationError() throws {
        var configuration = WebSocketClient.Configuration(
            url: URL(string: "ws://example.test/")!, transport: self.transport)
        configuration.unconfirmedLimits = OutboxLimits(count: -1)
        #expect(throws: WebSocketConfigurationError.self) { try configuration.validate() }
    }
}
