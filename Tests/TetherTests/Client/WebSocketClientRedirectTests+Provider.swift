#if os(Linux)
import Foundation
import Testing
@testable import Tether
import TetherCore
import TetherTestServer
import TetherTesting

/// Redirects of a request provider's URL, against real servers: the provider's credentials follow the chain while it
/// stays at the provider URL's origin and are never sent to another one (as the Fetch standard and curl drop them);
/// a 401 at a redirect target asks the provider once more, which the same origin's target accepts, while another
/// origin's target never sees a credential and so fails the session after that one refresh; redirects turned off
/// make a redirect a refusal.
extension WebSocketClientRedirectTests {
    /// A client whose every attempt asks `issuer` (a token per refusal, in a header and the URL's query).
    func client(
        _ issuer: TokenIssuer, _ configure: (inout WebSocketConfiguration) -> Void = { _ in }
    ) throws -> WebSocketClient {
        var configuration = self.configuration(issuer.base.absoluteString)
        configuration.requestProvider = issuer.provider
        configure(&configuration)
        return try WebSocketClient(configuration: configuration)
    }

    /// The `Authorization` of each request `server` received, in order.
    func authorizations(_ server: TestServer) -> [String?] {
        server.connections.map { $0.request?.header("Authorization") }
    }

    @Test func theProvidersCredentialsFollowTheChainOnlyWithinItsOriginAndTheLastServersAnswerReachesTheApp()
        async throws {
        let final = try TestServer { _ in
            Scenario.echo.selecting(subprotocol: "feed.v1").addingResponseHeader(name: "X-Session", value: "s-7")
        }
        let first = try TestServer { context in
            switch context.path {
            case "/start": .redirect(status: 302, to: "/middle")
            case "/middle": .redirect(status: 307, to: final.url(path: "/end"))
            default: .reject(status: 404)
            }
        }
        let issuer = TokenIssuer(base: URL(string: first.url(path: "/start"))!)
        let client = try self.client(issuer) { configuration in
            configuration.subprotocols = ["feed.v1"]
            configuration.responseHeaderNames = ["X-Session"]
        }
        let recorder = EventRecorder(client.events)
        await client.start()
        let open = try #require(await recorder.state(.open))
        #expect(open.generation == 1 && open.handshake?.subprotocol == "feed.v1")
        #expect(open.handshake?.values(ofHeader: "x-session") == ["s-7"])
        #expect(first.connections.map { $0.request?.target } == ["/start?token=secret-1", "/middle"])
        #expect(self.authorizations(first) == ["Bearer secret-1", "Bearer secret-1"])
        #expect(self.authorizations(final) == [nil])  // another port: another origin
        #expect(issuer.contexts == [ConnectionRequest.Context(generation: 1, attempts: 0, previousEnd: nil)])
        try await client.send(text: "through")
        #expect(await recorder.message() == .text("through"))
        await client.stop()
        await first.stop()
        await final.stop()
    }

    /// The provider's origin redirects to a path of its own that refuses the expired token: the provider is asked
    /// again at once, and the fresh token goes through the same chain and opens.
    @Test func aTokenRefusedAtASameOriginTargetIsRefreshedAndTheChainOpensWithIt() async throws {
        let server = try TestServer { context in
            switch context.path {
            case "/start": .redirect(status: 302, to: "/end")
            case "/end": context.header("Authorization") == "Bearer secret-2" ? .echo : .reject(status: 401)
            default: .reject(status: 404)
            }
        }
        let issuer = TokenIssuer(base: URL(string: server.url(path: "/start"))!)
        let client = try self.client(issuer)
        let recorder = EventRecorder(client.events)
        await client.start()
        let open = try #require(await recorder.state(.open))
        #expect(open.generation == 2 && open.attempts == 0)
        #expect(issuer.contexts == [
            ConnectionRequest.Context(generation: 1, attempts: 0, previousEnd: nil),
            ConnectionRequest.Context(generation: 2, attempts: 0, previousEnd: .handshakeRejected(status: 401)),
        ])
        #expect(server.connections.map { $0.request?.target }
            == ["/start?token=secret-1", "/end", "/start?token=secret-2", "/end"])
        #expect(self.authorizations(server)
            == ["Bearer secret-1", "Bearer secret-1", "Bearer secret-2", "Bearer secret-2"])
        #expect(!recorder.events.contains { event in
            if case .stateChanged(let state, _) = event { return state.phase == .waiting || state.phase == .failed }
            return false
        })
        await client.stop()
        await server.stop()
    }

    /// A target on another origin never gets the provider's credentials, so its 401 is not the provider's token
    /// going stale: the provider is asked once more (as for any 401), the refreshed attempt is refused again, and
    /// the session fails as a 401 does, without a third request and without a credential ever reaching that origin.
    @Test func aTargetOnAnotherOriginThatWantsCredentialsFailsTheSessionAfterOneRefresh() async throws {
        let target = try TestServer { context in
            context.header("Authorization") == nil ? .reject(status: 401) : .echo
        }
        let first = try TestServer { _ in .redirect(status: 302, to: target.url(path: "/end")) }
        let issuer = TokenIssuer(base: URL(string: first.url(path: "/start"))!)
        let client = try self.client(issuer)
        let recorder = EventRecorder(client.events)
        await client.start()
        let failed = try #require(await recorder.state(.failed))
        #expect(failed.failure == .handshakeRejected(status: 401) && failed.generation == 2)
        #expect(issuer.contexts.map(\.credentialsRejected) == [false, true])
        #expect(self.authorizations(first) == ["Bearer secret-1", "Bearer secret-2"])
        #expect(self.authorizations(target) == [nil, nil])
        #expect(!recorder.records.contains { $0.kind == .retryScheduled })
        await client.stop()
        await first.stop()
        await target.stop()
    }

    /// With redirects off, the provider's URL answering with a redirect is a refusal of the upgrade with that status:
    /// the session fails (`handshake_rejected`, not retried) and the `Location` is never asked.
    @Test func withRedirectsOffARedirectFailsTheSessionAsARefusal() async throws {
        let target = try TestServer(scenario: .echo)
        let first = try TestServer { _ in .redirect(status: 307, to: target.url(path: "/end")) }
        let issuer = TokenIssuer(base: URL(string: first.url(path: "/start"))!)
        let client = try self.client(issuer) { $0.maximumRedirects = 0 }
        let recorder = EventRecorder(client.events)
        await client.start()
        let failed = try #require(await recorder.state(.failed))
        #expect(failed.failure == .handshakeRejected(status: 307))
        #expect(!recorder.records.contains { $0.kind == .redirected || $0.kind == .retryScheduled })
        #expect(first.acceptedConnectionCount == 1 && target.acceptedConnectionCount == 0)
        #expect(issuer.contexts.count == 1)
        await client.stop()
        await first.stop()
        await target.stop()
    }
}
#endif
