import Foundation
import Testing
import TetherCore
@testable import Tether
import TetherTesting

/// The client actor driven by an in-memory transport and a manual clock: every step is explicit.
@Suite struct WebSocketClientTests {
    let clock = ManualClock()
    let transport = InMemoryTransport()

    func makeClient(
        lifecycle: LifecyclePolicy = .closeInBackground, url: String = "ws://example.test/feed",
        recordsMessages: Bool = false, recordsHeartbeats: Bool = true
    ) throws -> (WebSocketClient, EventRecorder) {
        var configuration = WebSocketClient.Configuration(
            url: URL(string: url)!,
            heartbeatInterval: .milliseconds(100),
            heartbeatTimeout: .milliseconds(1000),
            connectTimeout: .milliseconds(5000),
            probeTimeout: .milliseconds(200),
            lifecycle: lifecycle,
            transport: self.transport
        )
        configuration.recordsMessages = recordsMessages
        configuration.recordsHeartbeats = recordsHeartbeats
        let client = try WebSocketClient(configuration: configuration, clock: self.clock, randomSeed: 42)
        return (client, EventRecorder(client.events))
    }

    func nextConnection() async throws -> InMemoryConnection {
        try #require(await self.transport.nextConnection())
    }

    /// Heartbeat rounds 1...`rounds` on the client made by `makeClient` (100 ms interval): the ping of round n at
    /// 200·n − 100 ms, its pong 10·n ms later, each expected back as a `.roundTrip` of 10·n ms. False (with the
    /// issue recorded) when a ping or a round trip did not come.
    func answerPings(rounds: Int, on connection: InMemoryConnection, _ probe: EventRecorder) async -> Bool {
        for round in 1...rounds {
            self.clock.advance(toMilliseconds: round * 200 - 100)
            guard case .ping(let id)? = await connection.nextCommand() else {
                Issue.record("expected ping \(round)")
                return false
            }
            self.clock.advance(toMilliseconds: round * 200 - 100 + 10 * round)
            connection.emit(.pong(id: id))
            let rtt = await probe.next { if case .roundTrip = $0 { true } else { false } }
            guard case .roundTrip(let milliseconds)? = rtt else {
                Issue.record("expected a round trip after pong \(round)")
                return false
            }
            #expect(milliseconds == 10 * round)
        }
        return true
    }

    @Test func pingAfterOneIntervalAndPongRecordsRoundTrip() async throws {
        let (client, probe) = try self.makeClient()
        let connection = try await self.transport.open(client, probe)

        self.clock.advance(toMilliseconds: 99)
        self.clock.advance(toMilliseconds: 100)
        let ping = await connection.nextCommand()
        guard case .ping(let id)? = ping else {
            Issue.record("expected a ping, got \(String(describing: ping))")
            return
        }
        self.clock.advance(toMilliseconds: 130)
        connection.emit(.pong(id: id))
        let pong = await probe.record(.pong)
        #expect(pong?.rtt == 30)
        #expect(pong?.generation == 1)
        #expect(await client.state.phase == .open)
        #expect(await client.state.lastRTT == 30)
    }

    @Test func aNewRoundTripTimeIsARoundTripEventNotAStateChange() async throws {
        let (client, probe) = try self.makeClient()
        let connection = try await self.transport.open(client, probe)
        let changesWhenOpen = probe.events.filter { if case .stateChanged = $0 { true } else { false } }.count
        guard await self.answerPings(rounds: 3, on: connection, probe) else { return }
        #expect(await client.state.lastRTT == 30)
        let changes = probe.events.filter { if case .stateChanged = $0 { true } else { false } }.count
        #expect(changes == changesWhenOpen, "three pongs changed only lastRTT: no state change event")
    }

    /// Many connections held open turn the heartbeat's records off: each pong is still a round trip on `events`, and
    /// nothing else of a successful heartbeat is published.
    @Test func withoutHeartbeatRecordsEachPongIsARoundTripAndNoPingOrPongRecordIsPublished() async throws {
        let (client, probe) = try self.makeClient(recordsHeartbeats: false)
        let connection = try await self.transport.open(client, probe)
        guard await self.answerPings(rounds: 2, on: connection, probe) else { return }
        // A ping's record would come before its round trip: everything of the two cycles has been published.
        let heartbeatRecords = probe.events.filter { event in
            if case .record(let record) = event { record.kind == .ping || record.kind == .pong } else { false }
        }
        #expect(heartbeatRecords.isEmpty, "\(heartbeatRecords)")
        #expect(probe.events.contains { if case .record(let record) = $0 { record.kind == .opened } else { false } })
    }

    @Test func sendWritesToTheOpenConnectionAndThrowsNotOpenOnceStopped() async throws {
        let (client, probe) = try self.makeClient()
        let connection = try await self.transport.open(client, probe)
        try await client.send(text: "first")
        #expect(await connection.nextCommand() == .send(.text("first")))
        async let stopped: Void = client.stop()
        #expect(await connection.nextCommand() == .close(code: 1000, reason: "user_stopped"))
        // Stopping retired the connection before it ended: a send now never reaches it.
        await #expect(throws: WebSocketSendError.notOpen) { try await client.send(text: "while closing") }
        connection.emit(.ended(.closedLocally))
        await stopped
        await #expect(throws: WebSocketSendError.notOpen) { try await client.send(text: "after stop") }
        #expect(connection.log.filter { if case .send = $0 { true } else { false } }.count == 1)
    }

    @Test func missingPongClosesOnceWithPongTimeoutThenReconnectsAfterBackoff() async throws {
        let (client, probe) = try self.makeClient()
        let first = try await self.transport.open(client, probe)
        self.clock.advance(toMilliseconds: 100)
        #expect(await first.nextCommand() == .ping(1))

        self.clock.advance(toMilliseconds: 1099)
        self.clock.advance(toMilliseconds: 1100)
        #expect(await first.nextCommand() == .close(code: 1001, reason: "pong_timeout"))
        let closed = await probe.record(.closed)
        #expect(closed?.reason == .pongTimeout)
        #expect(closed?.time == 1100)
        let retry = await probe.record(.retryScheduled)
        let delay = try #require(retry?.delay)
        #expect(delay >= 1000 && delay <= 1500)

        self.clock.advance(toMilliseconds: 1100 + delay)
        let second = try await self.nextConnection()
        #expect(await client.state.generation == 2)
        #expect(first.log.filter { if case .close = $0 { true } else { false } }.count == 1)
        _ = second
    }

    @Test func lateCallbacksFromAnOldConnectionChangeNothing() async throws {
        let (client, probe) = try self.makeClient()
        let first = try await self.transport.open(client, probe)
        self.clock.advance(toMilliseconds: 100)
        #expect(await first.nextCommand() == .ping(1))
        self.clock.advance(toMilliseconds: 1100)
        #expect(await first.nextCommand() == .close(code: 1001, reason: "pong_timeout"))
        let delay = try #require(await probe.record(.retryScheduled)?.delay)
        self.clock.advance(toMilliseconds: 1100 + delay)
        let second = try await self.nextConnection()
        second.emit(.opened(subprotocol: nil))
        #expect(await probe.state(.open)?.generation == 2)

        // The old connection's queued callbacks arrive now: none may touch generation 2.
        first.emit(.pong(id: 1))
        first.emit(.opened(subprotocol: nil))
        first.emit(.message(.text("late")))
        first.emit(.ended(.peerClosed(code: 1011)))
        second.emit(.message(.text("fresh")))
        let message = await probe.next { if case .message = $0 { true } else { false } }
        guard case .message(.text(let text), _)? = message else {
            Issue.record("expected the new connection's message")
            return
        }
        #expect(text == "fresh")
        let state = await client.state
        #expect(state.phase == .open)
        #expect(state.generation == 2)
        #expect(second.log.isEmpty)
    }

    @Test func sendWhileNotOpenThrowsInsteadOfDropping() async throws {
        let (client, _) = try self.makeClient()
        await #expect(throws: WebSocketSendError.notOpen) {
            try await client.send(text: "hello")
        }
        await client.start()
        await #expect(throws: WebSocketSendError.notOpen) {
            try await client.send(text: "still connecting")
        }
    }

    @Test func sendGoesToTheOpenConnection() async throws {
        let (client, probe) = try self.makeClient()
        let connection = try await self.transport.open(client, probe)
        try await client.send(text: "hello")
        #expect(await connection.nextCommand() == .send(.text("hello")))
    }

    @Test(arguments: [false, true]) func messagesAreDeliveredInOrder(recordsMessages: Bool) async throws {
        let (client, probe) = try self.makeClient(recordsMessages: recordsMessages)
        let connection = try await self.transport.open(client, probe)
        for index in 0..<100 {
            connection.emit(.message(.text("m\(index)")))
        }
        for index in 0..<100 {
            let event = await probe.next { if case .message = $0 { true } else { false } }
            guard case .message(.text(let text), _)? = event else {
                Issue.record("missing message \(index)")
                return
            }
            #expect(text == "m\(index)")
        }
        if recordsMessages {
            // Each message's record is published right after the message itself: wait for the last one.
            let all = await probe.wait { $0.records.filter { $0.kind == .message }.count >= 100 }
            let records = (all?.records ?? []).filter { $0.kind == .message }
            #expect(records.count == 100)
            #expect(records.allSatisfy { $0.bytes != nil && $0.generation == 1 })
        } else {
            // Events keep their order: once the next ping's record is in, any message record would be too.
            self.clock.advance(toMilliseconds: 100)
            #expect(await probe.record(.ping) != nil)
            #expect(!probe.records.contains { $0.kind == .message })
        }
    }

    @Test func stopWhileOpenClosesWith1000AndLeavesNothingBehind() async throws {
        let (client, probe) = try self.makeClient()
        let connection = try await self.transport.open(client, probe)
        async let stopped: Void = client.stop()
        #expect(await connection.nextCommand() == .close(code: 1000, reason: "user_stopped"))
        connection.emit(.ended(.closedLocally))
        await stopped
        #expect(await client.state.phase == .stopped)
        let resources = await client.resources
        #expect(resources.connections == 0 && resources.readers == 0 && resources.timers == 0)
    }

    @Test func stopWhileWaitingCancelsTheRetryTimer() async throws {
        let (client, probe) = try self.makeClient()
        await client.start()
        let first = try await self.nextConnection()
        first.emit(.ended(.connectFailed(.refused)))
        #expect(await probe.state(.waiting) != nil)
        #expect(await client.resources.timers == 1)
        await client.stop()
        let resources = await client.resources
        #expect(resources.connections == 0 && resources.readers == 0 && resources.timers == 0)
        self.clock.advance(by: .seconds(120))
        #expect(self.transport.all.count == 1)
    }

    @Test func stopWhileConnectingClosesTheAttempt() async throws {
        let (client, _) = try self.makeClient()
        await client.start()
        let connection = try await self.nextConnection()
        async let stopped: Void = client.stop()
        #expect(await connection.nextCommand() == .close(code: 1000, reason: "user_stopped"))
        connection.emit(.ended(.closedLocally))
        await stopped
        let resources = await client.resources
        #expect(resources.connections == 0 && resources.readers == 0 && resources.timers == 0)
    }

    @Test func unauthorizedHandshakeStopsWithAVisibleFailure() async throws {
        let (client, probe) = try self.makeClient()
        await client.start()
        let connection = try await self.nextConnection()
        connection.emit(.ended(.handshakeRejected(status: 401, retryAfter: nil)))
        let failed = await probe.state(.failed)
        #expect(failed?.failure == .handshakeRejected(status: 401))
        #expect(await client.resources.timers == 0)
    }

    @Test func backgroundClosesWith1001AndForegroundReconnects() async throws {
        let (client, probe) = try self.makeClient()
        let first = try await self.transport.open(client, probe)
        await client.enterBackground()
        #expect(await first.nextCommand() == .close(code: 1001, reason: "entered_background"))
        #expect(await probe.state(.suspended) != nil)
        await client.enterForeground()
        let second = try await self.nextConnection()
        #expect(await client.state.generation == 2)
        second.emit(.opened(subprotocol: nil))
        #expect(await probe.state(.open)?.generation == 2)
    }

    @Test func pathLossWhileWaitingGoesOfflineAndItsReturnConnectsAtOnce() async throws {
        let (client, probe) = try self.makeClient()
        await client.start()
        let first = try await self.nextConnection()
        first.emit(.ended(.connectFailed(.unreachable)))
        #expect(await probe.state(.waiting) != nil)
        let attempts = await client.state.attempts
        await client.updatePath(.unavailable)
        #expect(await probe.state(.offline) != nil)
        self.clock.advance(by: .seconds(300))
        #expect(self.transport.all.count == 1)
        #expect(await client.state.attempts <= attempts)
        await client.updatePath(.available)
        _ = try await self.nextConnection()
        #expect(self.transport.all.count == 2)
        #expect(await client.state.phase == .connecting)
    }

    @Test func noLogRecordOrEventDescriptionCarriesQueryOrBody() async throws {
        let (client, probe) = try self.makeClient(url: "ws://example.test/feed?token=s3cr3t-t0ken")
        let connection = try await self.transport.open(client, probe)
        connection.emit(.message(.text("password=hunter2")))
        _ = await probe.next { if case .message = $0 { true } else { false } }
        let text = probe.events.map(\.description).joined(separator: "\n")
        #expect(!text.contains("s3cr3t"))
        #expect(!text.contains("hunter2"))
        let url = URL(string: "ws://user:pw@example.test:81/feed?token=x#frag")!
        #expect(url.redactedForLogs == "ws://example.test:81/feed")
    }
}
