// example begin: docs/testing.md#manual-clock
import Foundation
import Testing
import Tether
import TetherTesting
// example end
#if os(Linux)
import TetherTestServer
#endif

/// The examples of docs/testing.md, run (`DocumentationExampleTests` checks that the page shows them as they are).
@Suite struct TestingExamples {
    // example begin: docs/testing.md#manual-clock
    @Test func aSilentServerIsDetectedAndTheClientReconnects() async throws {
        let clock = ManualClock()                                  // time moves only when the test says
        let transport = InMemoryTransport()                        // no sockets: the test plays the network
        let configuration = WebSocketConfiguration(
            url: URL(string: "wss://example.com/feed")!,
            heartbeatInterval: .seconds(15), heartbeatTimeout: .seconds(5),
            pathMonitoring: .none, transport: transport
        )
        let client = try WebSocketClient(configuration: configuration, clock: clock)
        let recorder = EventRecorder(client.events)                // before start(): it reads from now on

        let first = try await transport.open(client, recorder)     // start; connection 1 opens
        clock.advance(by: .seconds(15))                            // one heartbeat interval: a ping goes out
        #expect(await first.nextCommand() == .ping(1))
        clock.advance(by: .seconds(5))                             // no pong by the deadline
        #expect(await first.nextCommand() == .close(code: 1001, reason: "pong_timeout"))
        first.emit(.ended(.closedLocally))
        let waiting = try #require(await recorder.state(.waiting)) // a retry after backoff and jitter
        #expect(waiting.connectivity == .serverUnreachable(.timeout))

        clock.advance(toMilliseconds: try #require(waiting.retryAt))  // the backoff passes, no sleeping
        let second = try #require(await transport.nextConnection())
        second.emit(.opened(subprotocol: nil))
        #expect(await recorder.state(.open)?.generation == 2)

        async let stopped: Void = client.stop()
        #expect(await second.nextCommand() == .close(code: 1000, reason: "user_stopped"))
        second.emit(.ended(.closedLocally))
        await stopped
    }
    // example end

    #if os(Linux)
    /// The same story over a real socket, with the real clock.
    @Test func aRealServerThatNeverAnswersPingsIsDetected() async throws {
        // example begin: docs/testing.md#test-server
        let server = try TestServer(scenario: .noPong)            // or .normal, .echo, .close(...), .reject(...)
        var configuration = WebSocketConfiguration(url: URL(string: server.url(path: "/feed"))!)
        configuration.heartbeatInterval = .milliseconds(50)
        configuration.heartbeatTimeout = .milliseconds(100)
        let client = try WebSocketClient(configuration: configuration)
        let recorder = EventRecorder(client.events)               // reads from now on: create it before start()
        await client.start()
        let close = await recorder.record(.closed)                // the next close record, or nil after 10 s
        #expect(close?.reason == .pongTimeout)
        let reconnected = await recorder.wait { $0.records.contains { $0.kind == .opened && $0.generation == 2 } }
        #expect(reconnected != nil)
        await client.stop()
        await server.stop()
        // example end
    }

    /// Tokens that expire, refreshed by the client's request provider.
    @Test func anExpiredTokenIsRefreshedThroughTheRequestProvider() async throws {
        // example begin: docs/testing.md#expiring-tokens
        let tokens = try ExpiringTokens(uses: 2)                  // each token good for two upgrades, then 401
        let server = try TestServer(scenario: tokens.scenario(
            accepting: Scenario.echo.addingResponseHeader(name: "X-Session-Id", value: "s-1")
                .closing(afterMilliseconds: 100, code: 1001)))     // each connection ends: the client comes back
        var configuration = WebSocketConfiguration(url: URL(string: server.url(path: "/feed"))!)
        configuration.backoff = BackoffPolicy(base: .milliseconds(20), cap: .milliseconds(20))
        configuration.responseHeaderNames = ["X-Session-Id"]
        configuration.requestProvider = { context in
            let token = context.credentialsRejected ? tokens.issue() : tokens.current  // the app's auth service
            return ConnectionRequest(
                url: URL(string: server.url(path: "/feed"))!, headers: [(name: "Authorization", value: token)])
        }
        let client = try WebSocketClient(configuration: configuration)
        let recorder = EventRecorder(client.events)
        await client.start()
        let refused = await recorder.record(.closed) { $0.reason == .handshakeRejected(status: 401) }  // token used up
        let refreshed = await recorder.state(.open)               // the next open: the same session, a fresh token
        #expect(refused != nil && refreshed?.generation == refused.map { $0.generation + 1 })
        #expect(refreshed?.handshake?.values(ofHeader: "x-session-id") == ["s-1"])
        await client.stop()
        await server.stop()
        // example end
    }
    #endif
}
