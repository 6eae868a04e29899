import Foundation
import Testing
import TetherCore
@testable import Tether
import TetherTesting
#if os(Linux)
import TetherTestServer
#endif

/// A client an app drops without `stop()` (the view model that owned it went away): nothing inside it keeps it
/// alive, so it is deinitialized, closes its connections with 1001, releases its timer, path monitor and transport,
/// and the readers of its events see the end.
@Suite struct WebSocketClientReleaseTests {
    static let ethernet = PathSnapshot(status: .satisfied, interfaces: [.wiredEthernet])

    /// A task reading `events` as an app's does (holding the sequence, not the client): it announces the open and
    /// returns once the sequence ends.
    static func reader(of events: WebSocketEvents) -> (task: Task<Void, Never>, opened: AsyncStream<Void>) {
        let (opened, sink) = AsyncStream.makeStream(of: Void.self)
        let task = Task {
            for await event in events {
                if case .stateChanged(let state, _) = event, state.phase == .open { sink.yield() }
            }
        }
        return (task, opened)
    }

    /// In memory, with a manual clock: the client's pieces are each visible. The client is dropped open, with its
    /// heartbeat timer armed, its path monitor running, its events being read and a queued write in flight.
    @Test func aDroppedClientClosesWith1001AndReleasesItsTimerMonitorAndConnection() async throws {
        let clock = ManualClock()
        let transport = InMemoryTransport()
        let monitor = ScriptedPathMonitor(current: Self.ethernet)
        let configuration = WebSocketClient.Configuration(
            url: URL(string: "ws://example.test/feed")!, heartbeatInterval: .seconds(60),
            pathMonitoring: .custom { monitor }, transport: transport)
        weak var released: WebSocketClient?
        let reader: Task<Void, Never>
        let connection: InMemoryConnection
        do {
            let client = try WebSocketClient(configuration: configuration, clock: clock, randomSeed: 3)
            released = client
            let events = Self.reader(of: client.events)
            reader = events.task
            await client.start()
            connection = try #require(await transport.nextConnection())
            connection.emit(.opened(subprotocol: nil))
            _ = await withDeadline { await events.opened.first { _ in true } }
            connection.holdSends()  // the socket has no room: the write below stays in flight
            try await client.send(.text("queued"), policy: .queued(expiresAfter: nil))
            #expect(await connection.nextCommand() == .send(.text("queued")))
        }
        // Dropped: no `stop()`. Its events end (the deinit finishes them), which is the signal that it is gone.
        let ended: Void? = await abandoning { await reader.value }
        #expect(ended != nil, "the events of a dropped client never ended")
        #expect(released == nil)
        #expect(connection.log.last == .close(code: 1001, reason: ""))
        #expect(monitor.isCancelled)
        #expect(clock.sleeperCount == 0, "the timer of a dropped client still sleeps")
        connection.emit(.ended(.peerClosed(code: 1001)))  // the transport's end reaches nobody, and breaks nothing
    }

    /// What waits in the outbox of a client dropped without `stop()` is reported as `stop()` reports it
    /// (`.outboxDropped(_, reason: .stopped)`, first first) before the events end: it was accepted, is never written,
    /// and an app that reads to the end learns it. Before, it vanished unreported (found by the randomized suite,
    /// seed 0x357E7E0001).
    @Test func aDroppedClientReportsWhatWaitsInItsOutboxAsStopped() async throws {
        let transport = InMemoryTransport()
        let configuration = WebSocketClient.Configuration(
            url: URL(string: "ws://example.test/feed")!, pathMonitoring: .none, transport: transport)
        let reader: Task<[WebSocketEvent], Never>
        do {
            let client = try WebSocketClient(configuration: configuration, clock: ManualClock())
            let events = client.events
            reader = Task { await events.reduce(into: []) { $0.append($1) } }
            await client.start()  // connecting: the queued messages wait for the open
            _ = try #require(await transport.nextConnection())
            try await client.send(.text("first"), policy: .queued(expiresAfter: nil))
            try await client.send(.text("second"), policy: .queued(expiresAfter: .seconds(60)))
        }
        let ended = await abandoning { await reader.value }
        let events = try #require(ended, "the events of a dropped client never ended")
        let drops = events.compactMap { event -> String? in
            guard case .outboxDropped(.text(let text), let reason) = event else { return nil }
            return "\(text) \(reason)"
        }
        #expect(drops == ["first stopped", "second stopped"])
    }

    /// A dropped client closes its connections with 1001 and can no longer hear whether the server answered: what it
    /// wrote since the last pong, and a queued write still in flight, are reported as a loss would report them
    /// (`.unconfirmed`) before the events end. They vanished unreported when the connection broke just as the client
    /// was dropped (found by the randomized suite, seed 0x49307DB1229A62D0).
    @Test func aDroppedClientReportsWhatItWroteThatNothingProvedDelivered() async throws {
        let transport = InMemoryTransport()
        let configuration = WebSocketClient.Configuration(
            url: URL(string: "ws://example.test/feed")!, heartbeatInterval: .seconds(60), pathMonitoring: .none,
            transport: transport)
        let reader: Task<[WebSocketEvent], Never>
        let connection: InMemoryConnection
        do {
            let client = try WebSocketClient(configuration: configuration, clock: ManualClock())
            let recorder = EventRecorder(client.events)
            connection = try await transport.open(client, recorder)
            let events = client.events
            reader = Task { await events.reduce(into: []) { $0.append($1) } }  // takes over from the recorder
            try await client.send(.text("written"))
            #expect(await connection.nextCommand() == .send(.text("written")))
            connection.holdSends()  // the socket has no room: the queued write stays in flight
            try await client.send(.text("in flight"), policy: .queued(expiresAfter: nil))
            #expect(await connection.nextCommand() == .send(.text("in flight")))
        }
        let ended = await abandoning { await reader.value }
        let events = try #require(ended, "the events of a dropped client never ended")
        let reports = events.compactMap { event -> UnconfirmedMessages? in
            if case .unconfirmed(let report) = event { report } else { nil }
        }
        #expect(reports == [UnconfirmedMessages(
            generation: 1, messages: [.text("written"), .text("in flight")], notKept: 0)])
        #expect(connection.log.last == .close(code: 1001, reason: ""))
    }

    /// Observers of its state hold the state, not the client: a dropped client is released under an observable
    /// object and a `states` observer, which then ends; the object keeps the last state it had.
    @MainActor
    @Test func observersOfItsStateDoNotKeepADroppedClientAlive() async throws {
        let transport = InMemoryTransport()
        let configuration = WebSocketClient.Configuration(
            url: URL(string: "ws://example.test/feed")!, pathMonitoring: .none, transport: transport)
        weak var released: WebSocketClient?
        let observed: ObservableConnectionState
        let observer: Task<SessionPhase?, Never>
        do {
            let client = try WebSocketClient(configuration: configuration, clock: ManualClock())
            released = client
            observed = ObservableConnectionState(client)
            let states = client.states
            observer = Task {
                var last: SessionPhase?
                for await state in states { last = state.phase }
                return last
            }
            await client.start()
            let connection = try #require(await transport.nextConnection())
            connection.emit(.opened(subprotocol: nil))
            try await client.waitUntilOpen(timeout: .seconds(10))
        }
        let last = await abandoning { await observer.value }
        #expect(last == .some(.open), "the states of a dropped client never ended")
        #expect(released == nil)
        #expect(observed.state.phase == .open || observed.state.phase == .connecting)
    }

    #if os(Linux)
    /// Over a real socket to the test server, the default transport and clock: the server records the 1001 close.
    @Test func aClientDroppedWhileConnectedToTheServerClosesWith1001() async throws {
        let server = try TestServer(scenario: .normal)
        let monitor = ScriptedPathMonitor(current: Self.ethernet)
        let configuration = WebSocketClient.Configuration(
            url: URL(string: server.url(path: "/dropped"))!, pathMonitoring: .custom { monitor })
        weak var released: WebSocketClient?
        let reader: Task<Void, Never>
        do {
            let client = try WebSocketClient(configuration: configuration)
            released = client
            let events = Self.reader(of: client.events)
            reader = events.task
            await client.start()
            _ = await withDeadline { await events.opened.first { _ in true } }
            try await client.send(text: "hello")
        }
        let ended: Void? = await abandoning { await reader.value }
        #expect(ended != nil, "the events of a dropped client never ended")
        #expect(released == nil)
        let record = try await server.waitForConnection(1) { $0.closeReceived != nil }
        #expect(record.closeReceived?.code == 1001)
        #expect(record.messageCount == 1)
        #expect(monitor.isCancelled)
        await server.stop()
    }
    #endif
}
