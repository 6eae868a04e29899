import Foundation
import Synchronization
import Testing
import TetherCore
@testable import Tether
import TetherTesting

/// The client's methods called from several tasks at once, and tasks cancelled in the middle of them, as an app's
/// views and view models do (docs/client.md "Calling the client from several tasks").
@Suite struct WebSocketClientConcurrencyTests {
    let clock = ManualClock()
    let transport = InMemoryTransport()

    func makeClient() throws -> (WebSocketClient, EventRecorder) {
        let configuration = WebSocketClient.Configuration(
            url: URL(string: "ws://example.test/feed")!, heartbeatInterval: .seconds(60), pathMonitoring: .none,
            transport: self.transport)
        let client = try WebSocketClient(configuration: configuration, clock: self.clock, randomSeed: 11)
        return (client, EventRecorder(client.events))
    }

    func sentTexts(_ connection: InMemoryConnection) -> [String] {
        connection.log.compactMap { if case .send(.text(let text)) = $0 { text } else { nil } }
    }

    /// How a task's send ended.
    enum Sent: Equatable, Sendable {
        case written
        case failed(WebSocketSendError)
    }

    /// `send(_:policy:)` for tasks that report how their send ended.
    static func send(_ client: WebSocketClient, _ text: String, policy: SendPolicy = .now) async -> Sent {
        do throws(WebSocketSendError) {
            try await client.send(.text(text), policy: policy)
            return .written
        } catch {
            return .failed(error)
        }
    }

    /// Four tasks send 200 messages each at once, every seventh through the outbox: every message is written once,
    /// each task's in the order it sent them (a `.now` send never overtakes a queued one of its task).
    @Test func sendsFromSeveralTasksAtOnceKeepEachTasksOrder() async throws {
        let (client, probe) = try self.makeClient()
        let connection = try await self.transport.open(client, probe)
        let failures = await withTaskGroup(of: Int.self) { group in
            for task in 0..<4 {
                group.addTask {
                    var failures = 0
                    for index in 0..<200 {
                        let policy: SendPolicy = index % 7 == 0 ? .queued(expiresAfter: nil) : .now
                        if case .failed = await Self.send(client, "\(task):\(index)", policy: policy) { failures += 1 }
                    }
                    return failures
                }
            }
            return await group.reduce(0, +)
        }
        #expect(failures == 0)
        await client.waitUntilOutboxEmpty()
        let sent = self.sentTexts(connection)
        #expect(sent.count == 800 && Set(sent).count == 800)
        for task in 0..<4 {
            let indices = sent.filter { $0.hasPrefix("\(task):") }.map { Int($0.dropFirst(2))! }
            #expect(indices == Array(0..<200), "task \(task) out of order")
        }
    }

    /// `start()` and `stop()` from eight tasks at once, in a seeded random order: calls run one at a time in the order
    /// they reach the actor, nothing traps, and once a last `stop()` returns nothing of the client is left; a
    /// `start()` afterwards opens again.
    @Test func startAndStopFromSeveralTasksAtOnceLeaveAClientThatStopsAndStartsCleanly() async throws {
        let (client, _) = try self.makeClient()
        let network = self.answeringNetwork()
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    var random = SplitMix64(seed: UInt64(task))
                    for _ in 0..<20 {
                        if random.next() % 2 == 0 { await client.start() } else { await client.stop() }
                    }
                }
            }
        }
        await client.stop()
        let resources = await client.resources
        #expect(resources.connections == 0 && resources.readers == 0 && resources.timers == 0)
        #expect(resources.pathMonitors == 0 && resources.writers == 0)
        #expect(await client.state.phase == .stopped)
        for connection in self.transport.all {
            let closes = connection.log.filter { if case .close = $0 { true } else { false } }
            #expect(closes == [.close(code: 1000, reason: "user_stopped")], "\(connection.log)")
        }
        await client.start()
        try await client.waitUntilOpen(timeout: .seconds(10))
        await client.stop()
        network.cancel()
    }

    /// Plays the network for `start`/`stop` storms: opens every connection the client makes and ends it as soon as
    /// the client closes it.
    func answeringNetwork() -> Task<Void, Never> {
        let connections = self.transport.connections
        return Task {
            for await connection in connections {
                connection.emit(.opened(subprotocol: nil))
                Task {
                    for await command in connection.commands {
                        guard case .close = command else { continue }
                        connection.emit(.ended(.closedLocally))
                        return
                    }
                }
            }
        }
    }

    /// A task blocked in `send` on a full socket (the transport holds the write) is cancelled: the send is not
    /// abandoned halfway: it returns once the write completes, as it would have.
    @Test func cancellingATaskBlockedInSendDoesNotAbandonTheMessage() async throws {
        let (client, probe) = try self.makeClient()
        let connection = try await self.transport.open(client, probe)
        connection.holdSends()
        let sender = Task { await Self.send(client, "blocked") }
        #expect(await connection.nextCommand() == .send(.text("blocked")))  // in flight, held
        sender.cancel()
        connection.releaseHeldSends()
        #expect(await abandoning { await sender.value } == .written)
        #expect(self.sentTexts(connection) == ["blocked"])
    }

    /// The same send, blocked, when the connection ends (here by `stop()`): it throws `.notOpen`, cancelled or not.
    @Test func aBlockedSendWhoseConnectionEndsThrowsNotOpen() async throws {
        let (client, probe) = try self.makeClient()
        let connection = try await self.transport.open(client, probe)
        connection.holdSends()
        let sender = Task { await Self.send(client, "blocked") }
        #expect(await connection.nextCommand() == .send(.text("blocked")))
        sender.cancel()
        async let stopped: Void = client.stop()
        #expect(await connection.nextCommand() == .close(code: 1000, reason: "user_stopped"))
        connection.emit(.ended(.closedLocally))  // releases the held send as not written
        await stopped
        #expect(await abandoning { await sender.value } == .failed(.notOpen))
    }

    /// A `.now` send waiting for its turn behind the outbox is cancelled: it keeps its turn and is written after the
    /// queued message, as if it had not been cancelled.
    @Test func cancellingASendWaitingBehindTheOutboxKeepsItsTurn() async throws {
        let (client, probe) = try self.makeClient()
        let connection = try await self.transport.open(client, probe)
        connection.holdSends()
        try await client.send(.text("queued"), policy: .queued(expiresAfter: nil))
        #expect(await connection.nextCommand() == .send(.text("queued")))  // the queued write is in flight
        let sender = Task { await Self.send(client, "now") }
        await client.waitUntilSendsWaitForOutbox(1)
        sender.cancel()
        connection.holdSends(false)  // the queued write completes; the parked send goes next
        #expect(await abandoning { await sender.value } == .written)
        #expect(self.sentTexts(connection) == ["queued", "now"])
    }
}
