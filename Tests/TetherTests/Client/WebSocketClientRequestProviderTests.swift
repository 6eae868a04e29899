import Foundation
import Synchronization
import Testing
import TetherCore
@testable import Tether
import TetherTesting

/// A request provider (`configuration.requestProvider`): each attempt's URL and headers made fresh, told why the
/// previous attempt ended; a 401 refreshes the credentials without `stop()`; a failure is a named, retried end; the
/// provider is bounded by the connect deadline, cancelled by `stop()`, never keeps a dropped client alive, and what it
/// returns is never shown.
@Suite struct WebSocketClientRequestProviderTests {
    let clock = ManualClock()
    let transport = InMemoryTransport()
    static let url = URL(string: "ws://example.test/feed")!

    func makeClient(
        _ provider: @escaping ConnectionRequest.Provider,
        _ configure: (inout WebSocketConfiguration) -> Void = { _ in }
    ) throws -> WebSocketClient {
        var configuration = WebSocketClient.Configuration(
            url: Self.url, heartbeatInterval: .seconds(60), backoff: BackoffPolicy(jitterPercent: 0),
            pathMonitoring: .none, transport: self.transport)
        configuration.requestProvider = provider
        configure(&configuration)
        return try WebSocketClient(configuration: configuration, clock: self.clock)
    }

    /// A client on `issuer`'s requests, started, with its recorder and its first connection (not yet opened).
    func started(
        _ issuer: TokenIssuer
    ) async throws -> (client: WebSocketClient, recorder: EventRecorder, first: InMemoryConnection) {
        let client = try self.makeClient(issuer.provider)
        let recorder = EventRecorder(client.events)
        await client.start()
        return (client, recorder, try #require(await self.transport.nextConnection()))
    }

    /// Stops `client`, playing the end of `connection` once the client closed it (an in-memory connection does not end
    /// by itself).
    func stop(_ client: WebSocketClient, closing connection: InMemoryConnection) async {
        let stopping = Task { await client.stop() }
        while let command = await connection.nextCommand() {
            if case .close = command { break }
        }
        connection.emit(.ended(.closedLocally))
        await stopping.value
    }

    /// The state change into `phase`, with its cause.
    func change(
        _ recorder: EventRecorder, to phase: SessionPhase
    ) async -> (state: ConnectionState, cause: CloseReason?)? {
        guard case .stateChanged(let state, let cause)? = await recorder.next(where: { event in
            if case .stateChanged(let state, _) = event { return state.phase == phase }
            return false
        }) else { return nil }
        return (state, cause)
    }

    @Test func eachAttemptConnectsWithWhatTheProviderMadeToldWhyThePreviousEnded() async throws {
        let issuer = TokenIssuer(base: Self.url)
        let (client, recorder, first) = try await self.started(issuer)
        #expect(first.request.url.query == "token=secret-1")
        #expect(first.request.headers.map(\.name) == ["Authorization"])
        #expect(first.request.headers.first?.value == "Bearer secret-1")
        first.emit(.ended(.connectFailed(.refused)))
        let waiting = try #require(await self.change(recorder, to: .waiting))
        self.clock.advance(toMilliseconds: try #require(waiting.state.retryAt))
        let second = try #require(await self.transport.nextConnection())
        second.emit(.opened(subprotocol: nil))
        #expect(await recorder.state(.open)?.generation == 2)
        await self.stop(client, closing: second)
        #expect(issuer.contexts == [
            ConnectionRequest.Context(generation: 1, attempts: 0, previousEnd: nil),
            ConnectionRequest.Context(generation: 2, attempts: 1, previousEnd: .connectFailed(.refused)),
        ])
    }

    /// Fails without the machine's second ask: a 401 then fails the session for good (`handshake_rejected`), and the
    /// app would have to build a new client, losing the outbox.
    @Test func aRefusedTokenIsRefreshedAtOnceAndTheSessionGoesOnWithItsOutbox() async throws {
        let issuer = TokenIssuer(base: Self.url)
        let (client, recorder, first) = try await self.started(issuer)
        try await client.send(.text("queued"), policy: .queued(expiresAfter: nil))
        first.emit(.ended(.handshakeRejected(status: 401, retryAfter: nil)))
        let second = try #require(await self.transport.nextConnection())  // at once: no wait, no clock advanced
        #expect(second.request.headers.first?.value == "Bearer secret-2")
        #expect(issuer.contexts.last?.credentialsRejected == true)
        #expect(issuer.contexts.last?.previousEnd == .handshakeRejected(status: 401))
        second.emit(.opened(subprotocol: nil))
        #expect(await second.nextCommand() == .send(.text("queued")))
        let open = try #require(await recorder.state(.open))
        #expect(open.generation == 2 && open.attempts == 0)
        #expect(!recorder.events.contains { event in
            if case .stateChanged(let state, _) = event { return state.phase == .failed || state.phase == .waiting }
            return false
        })
        await self.stop(client, closing: second)
    }

    @Test func aProviderThatThrowsEndsTheAttemptAsRequestFailedAndTheNextAttemptAsksAgain() async throws {
        struct SignedOut: Error {}
        let calls = Mutex(0)
        let client = try self.makeClient { _ in
            guard calls.withLock({ $0 += 1; return $0 }) > 1 else { throw SignedOut() }
            return ConnectionRequest(url: Self.url)
        }
        let recorder = EventRecorder(client.events)
        await client.start()
        let waiting = try #require(await self.change(recorder, to: .waiting))
        #expect(waiting.cause == .requestFailed(detail: "the provider threw SignedOut"))
        #expect(waiting.state.attempts == 1 && self.transport.all.isEmpty)
        let closed = try #require(recorder.records.first { $0.kind == .closed })
        #expect(closed.logLine.contains("reason=request_failed"))
        self.clock.advance(toMilliseconds: try #require(waiting.state.retryAt))
        let connection = try #require(await self.transport.nextConnection())
        connection.emit(.opened(subprotocol: nil))
        #expect(await recorder.state(.open) != nil)
        await self.stop(client, closing: connection)
    }

    @Test func aRequestTheHandshakeCannotCarryFailsTheAttemptNamingTheHeaderNotItsValue() async throws {
        let client = try self.makeClient { _ in
            ConnectionRequest(url: Self.url, headers: [(name: "Host", value: "secret-host"), ("X-A", "secret-a")])
        }
        let recorder = EventRecorder(client.events)
        await client.start()
        let waiting = try #require(await self.change(recorder, to: .waiting))
        guard case .requestFailed(let detail)? = waiting.cause else {
            Issue.record("\(String(describing: waiting.cause))")
            return
        }
        #expect(detail == "headers: Host (they must be free of the headers the handshake sets itself)")
        #expect(self.transport.all.isEmpty)
        await client.stop()
    }

    /// A provider that heeds cancellation is cancelled by `stop()`, which returns at once; one that does not is
    /// left behind, and its late answer connects nothing. Neither keeps a stopped client alive once the app drops
    /// it, not even the one still working.
    @Test func stopCancelsTheProviderAndReturnsWhetherOrNotTheProviderHeedsIt() async throws {
        let (cancelled, cancelledSink) = AsyncStream.makeStream(of: Void.self)
        let (asked, askedSink) = AsyncStream.makeStream(of: Void.self)
        weak var released: WebSocketClient?
        do {
            let client = try self.makeClient { _ in
                askedSink.yield()
                do {
                    try await Task.sleep(for: .seconds(3_600))
                } catch {
                    cancelledSink.yield()
                    throw error
                }
                return ConnectionRequest(url: Self.url)
            }
            released = client
            await client.start()
            _ = await withDeadline { await asked.first { _ in true } }
            let stopped: Void? = await abandoning { await client.stop() }
            #expect(stopped != nil, "stop() waited for the provider")
            #expect(await withDeadline { await cancelled.first { _ in true } } != nil, "the provider was not cancelled")
            #expect(await client.state.phase == .stopped)
            #expect(await client.resources == (0, 0, 0, 0, 0))
        }
        #expect(released == nil, "the provider's task kept the stopped client alive")

        let held = HeldProvider(answer: ConnectionRequest(url: Self.url))
        weak var releasedDeaf: WebSocketClient?
        do {
            let deaf = try self.makeClient(held.provider)
            releasedDeaf = deaf
            await deaf.start()
            _ = await withDeadline { await held.asked.first { _ in true } }
            let stoppedDeaf: Void? = await abandoning { await deaf.stop() }
            #expect(stoppedDeaf != nil, "stop() waited for a provider that ignores cancellation")
            #expect(await deaf.resources == (0, 0, 0, 0, 0))
        }
        #expect(releasedDeaf == nil, "a provider that ignores cancellation kept the stopped client alive")
        held.release()  // its answer reaches nobody
        #expect(self.transport.all.isEmpty)
    }

    /// The connect deadline covers the provider: a provider that does not answer in time ends the attempt as
    /// `connect_timeout`, retried; its late answer is ignored.
    @Test func theConnectDeadlineBoundsTheProvider() async throws {
        let held = HeldProvider(answer: ConnectionRequest(url: URL(string: "ws://example.test/feed?late=1")!))
        let answered = Mutex(false)
        let client = try self.makeClient { context in
            guard context.generation > 1 else { return try await held.provider(context) }
            answered.withLock { $0 = true }
            return ConnectionRequest(url: Self.url)
        } _: { $0.connectTimeout = .seconds(5) }
        let recorder = EventRecorder(client.events)
        await client.start()
        _ = await withDeadline { await held.asked.first { _ in true } }
        self.clock.advance(by: .seconds(5))
        let waiting = try #require(await self.change(recorder, to: .waiting))
        #expect(waiting.cause == .connectTimeout)
        held.release()  // too late: the attempt it answers is over
        self.clock.advance(toMilliseconds: try #require(waiting.state.retryAt))
        let connection = try #require(await self.transport.nextConnection())
        #expect(connection.request.url == Self.url && answered.withLock { $0 })
        connection.emit(.opened(subprotocol: nil))
        #expect(await recorder.state(.open)?.generation == 2)
        await self.stop(client, closing: connection)
        #expect(self.transport.all.count == 1)
    }

    @Test func aProviderStillWorkingDoesNotKeepADroppedClientAlive() async throws {
        let held = HeldProvider(answer: ConnectionRequest(url: Self.url))
        weak var released: WebSocketClient?
        let reader: Task<Void, Never>
        do {
            let client = try self.makeClient(held.provider)
            released = client
            let events = client.events
            reader = Task { for await _ in events {} }
            await client.start()
            _ = await withDeadline { await held.asked.first { _ in true } }
        }
        let ended: Void? = await abandoning { await reader.value }
        #expect(ended != nil, "the events of a dropped client never ended")
        #expect(released == nil)
        held.release()  // its answer reaches nobody
        #expect(self.transport.all.isEmpty)
    }

    /// The tokens travel in a header and the URL's query: no event, record, state, error or description shows them,
    /// across a refusal and a refresh.
    @Test func whatTheProviderReturnsAppearsInNoEventRecordOrDescription() async throws {
        let issuer = TokenIssuer(base: Self.url)
        let (client, recorder, first) = try await self.started(issuer)
        first.emit(.ended(.handshakeRejected(status: 401, retryAfter: nil)))
        let second = try #require(await self.transport.nextConnection())
        second.emit(.opened(subprotocol: nil))
        _ = await recorder.state(.open)
        await self.stop(client, closing: second)
        let request = issuer.request(ConnectionRequest.Context(generation: 9, attempts: 0, previousEnd: nil))
        var dumped = ""
        dump(request, to: &dumped)
        dump(second.request, to: &dumped)
        var shown = recorder.events.map { "\($0) \(String(reflecting: $0))" }
        shown += recorder.records.map(\.logLine)
        shown += ["\(request)", String(reflecting: request), dumped, "\(await client.state)"]
        for text in shown {
            #expect(!text.contains("secret"), "\(text)")
        }
        #expect("\(request)"
            == "ConnectionRequest(ws://example.test/feed (redacted), headers: [Authorization: (redacted)])")
    }

    /// Starts, stops and retries from many tasks at once while the provider takes its time: every connection made
    /// is closed, nothing is left running, and the last call decides.
    @Test func manyTasksStartAndStopWhileTheProviderWorks() async throws {
        let client = try self.makeClient { context in
            try await Task.sleep(for: .milliseconds(context.generation % 3))
            return ConnectionRequest(url: Self.url)
        }
        let transport = self.transport
        let network = Task {
            await withTaskGroup(of: Void.self) { group in
                for await connection in transport.connections {
                    group.addTask {
                        connection.emit(.opened(subprotocol: nil))
                        while let command = await connection.nextCommand(timeout: .seconds(30)) {
                            if case .close = command { break }
                        }
                        connection.emit(.ended(.closedLocally))
                    }
                }
            }
        }
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<40 {
                group.addTask {
                    switch index % 4 {
                    case 0, 1: await client.start()
                    case 2: await client.reconnectNow()
                    default: await client.stop()
                    }
                }
            }
        }
        let stopped: Void? = await abandoning { await client.stop() }
        #expect(stopped != nil)
        #expect(await client.state.phase == .stopped)
        #expect(await client.resources == (0, 0, 0, 0, 0))
        network.cancel()
    }
}
