#if os(Linux)
import Foundation
import Testing
@testable import Tether
import TetherTestServer
import TetherTesting

/// Tokens that expire, against the real server: the server accepts a token for two upgrades and then answers 401;
/// the client refreshes it through its request provider and goes on without `stop()` — the same client, its
/// outbox and its generations continuing — and the subprotocol and a chosen header reach the app.
@Suite(.timeLimit(.minutes(1)))
struct WebSocketClientCredentialsTests {
    /// Fails without the refresh: the 401 fails the session for good (`handshake_rejected`).
    @Test func anExpiredTokenIsRefreshedAndTheSessionGoesOnWithItsOutbox() async throws {
        let tokens = try ExpiringTokens(uses: 2)
        let scenario = Scenario.echo.selecting(subprotocol: "feed.v1")
            .addingResponseHeader(name: "X-Session", value: "s-7")
            .closing(afterMilliseconds: 200, code: 1001)
        let server = try TestServer(scenario: tokens.scenario(accepting: scenario))
        let url = URL(string: server.url(path: "/feed"))!
        let issuer = TokenIssuer(base: url)
        // The first attempt after the token's two upgrades (the one the server will refuse) waits until the test has
        // queued its messages: they wait in the outbox through the refusal and the refresh.
        let gate = HeldProvider(answer: ConnectionRequest(url: url))
        var configuration = WebSocketConfiguration(
            url: url, subprotocols: ["feed.v1"], heartbeatInterval: .seconds(60),
            backoff: BackoffPolicy(base: .milliseconds(20), factor: 1, cap: .milliseconds(20), jitterPercent: 0),
            pathMonitoring: .none)
        configuration.responseHeaderNames = ["X-Session"]
        configuration.requestProvider = { context in
            if tokens.accepted >= 2 { _ = try await gate.provider(context) }  // released once, then at once
            return issuer.request(context)
        }
        let client = try WebSocketClient(configuration: configuration)
        let recorder = EventRecorder(client.events)
        await client.start()
        #expect(await withDeadline { await gate.asked.first { _ in true } } != nil)
        try await client.send(.text("q1"), policy: .queued(expiresAfter: nil))
        try await client.send(.text("q2"), policy: .queued(expiresAfter: nil))
        gate.release()

        let echoed = await recorder.wait { $0.messages.count == 2 }
        #expect(echoed != nil, "the queued messages did not come back")
        let refusal = try #require(recorder.records.first { $0.reason == .handshakeRejected(status: 401) })
        let states = recorder.events.compactMap { event -> ConnectionState? in
            if case .stateChanged(let state, _) = event { return state }
            return nil
        }
        let refreshed = try #require(states.first { $0.phase == .open && $0.generation > refusal.generation })
        let messages = recorder.events.compactMap { event -> (WebSocketMessage, Int)? in
            if case .message(let message, let generation) = event { return (message, generation) }
            return nil
        }
        #expect(messages.map(\.0) == [.text("q1"), .text("q2")])
        #expect(messages.allSatisfy { $0.1 == refreshed.generation }, "\(messages.map(\.1)), \(refreshed.generation)")

        // The provider was told why each attempt came; it was asked again at once after the refusal.
        let contexts = issuer.contexts
        let after = try #require(contexts.first { $0.generation == refusal.generation + 1 })
        #expect(after.credentialsRejected && after.previousEnd == .handshakeRejected(status: 401))
        #expect(contexts.filter { $0.generation <= refusal.generation }.allSatisfy { !$0.credentialsRejected })
        #expect(refreshed.generation == refusal.generation + 1)
        let handshakes = server.connections.map { ($0.handshake, $0.request?.header("Authorization")) }
        let refused = try #require(handshakes.firstIndex { $0.0 == .rejected(status: 401, retryAfterSeconds: nil) })
        #expect(handshakes[..<refused].filter { $0.0 == .accepted(subprotocol: "feed.v1") }.map(\.1)
            == ["Bearer secret-1", "Bearer secret-1"])
        #expect(handshakes[refused].1 == "Bearer secret-1")
        let next = handshakes[(refused + 1)...].first { $0.0 == .accepted(subprotocol: "feed.v1") }
        #expect(next?.1 == "Bearer secret-2")

        // One session throughout: generations in order, never failed nor stopped, each open with what it agreed.
        #expect(states.map(\.generation) == states.map(\.generation).sorted())
        #expect(!states.contains { $0.phase == .failed || $0.phase == .stopped })
        let opens = states.filter { $0.phase == .open }
        #expect(opens.count >= 3)
        #expect(opens.allSatisfy { $0.handshake?.subprotocol == "feed.v1" })
        #expect(opens.allSatisfy { $0.handshake?.values(ofHeader: "x-session") == ["s-7"] })
        #expect(opens.allSatisfy { $0.handshake?.headers.count == 1 })
        await client.stop()
        await server.stop()
    }
}
#endif
