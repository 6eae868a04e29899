import Foundation
import Testing
@testable import Tether
import TetherCore
import TetherTesting
#if os(Linux)
import TetherTestServer
#endif

/// Redirects as a client's user sees them: each hop a `redirected` record with the status and the URL redacted, a
/// chain that opens as one attempt, and a loop or a downgrade that stops the session visibly without retrying.
@Suite(.timeLimit(.minutes(1))) struct WebSocketClientRedirectTests {
    @Test func aHopIsARecordWhoseURLHasNoQueryNorUserInfo() async throws {
        let transport = InMemoryTransport()
        let configuration = WebSocketConfiguration(
            url: URL(string: "wss://example.test/feed")!, pathMonitoring: .none, transport: transport)
        let client = try WebSocketClient(configuration: configuration, clock: ManualClock(), randomSeed: 1)
        let recorder = EventRecorder(client.events)
        await client.start()
        let connection = try #require(await transport.nextConnection())
        connection.emit(.redirected(status: 307, to: URL(string: "wss://user:pw@b.example:8443/v2/feed?token=s3cret")!))
        let hop = await recorder.record(.redirected)
        #expect(hop?.event == .redirected(status: 307, location: "wss://b.example:8443/v2/feed"))
        #expect(hop?.generation == 1 && hop?.from == .connecting && hop?.to == .connecting)
        #expect(hop.map { !$0.logLine.contains("s3cret") && !$0.logLine.contains("pw") } == true)
        connection.emit(.opened(subprotocol: nil))
        #expect(await recorder.state(.open) != nil)
        connection.emit(.ended(.receiveFailed))  // the in-memory connection ends only when told
        #expect(await recorder.state(.waiting) != nil)
        await client.stop()
    }

    #if os(Linux)
    static let authority = TestCertificateAuthority()
    static let trusting = TLSOptions(additionalTrustRoots: [.pem(Data(Self.authority.certificate.certificatePEM))])

    func configuration(_ url: String) -> WebSocketConfiguration {
        var configuration = WebSocketConfiguration(
            url: URL(string: url)!, heartbeatTimeout: .seconds(5), pathMonitoring: .none)
        configuration.tls = Self.trusting
        configuration.backoff = BackoffPolicy(base: .milliseconds(10), jitterPercent: 0)
        return configuration
    }

    func server(_ routes: [String: String], tls: Bool = false) throws -> TestServer {
        let configuration = TestServer.Configuration(tls: tls ? Self.authority.issue().serverTLS : nil)
        return try TestServer(configuration: configuration) { context in
            routes[context.path].map { .redirect(status: 302, to: $0) } ?? .echo
        }
    }

    @Test func aChainOpensAsOneAttemptAndEveryReconnectStartsFromTheConfiguredURL() async throws {
        // The final server closes its first connection at once (1001): the session reconnects.
        let final = try TestServer { context in
            context.index == 1 ? .echo.closing(afterMilliseconds: 0, code: 1001) : .echo
        }
        let first = try self.server(["/start": "/middle", "/middle": final.url(path: "/end")])
        let client = try WebSocketClient(configuration: self.configuration(first.url(path: "/start")))
        let recorder = EventRecorder(client.events)
        await client.start()
        #expect(await recorder.record(.opened) { $0.generation == 1 } != nil)
        #expect(await recorder.record(.opened) { $0.generation == 2 } != nil)
        try await client.send(text: "hello")
        #expect(await recorder.message() == .text("hello"))
        let hops = recorder.records.compactMap { record -> String? in
            guard case .redirected(let status, let location) = record.event else { return nil }
            return "gen\(record.generation) \(status) \(location)"
        }
        let middle = first.url(path: "/middle"), end = final.url(path: "/end")
        #expect(hops == ["gen1 302 \(middle)", "gen1 302 \(end)", "gen2 302 \(middle)", "gen2 302 \(end)"])
        #expect(recorder.records.filter { $0.kind == .connecting }.map(\.generation) == [1, 2])
        #expect(first.connections.map { $0.request?.path } == ["/start", "/middle", "/start", "/middle"])
        await client.stop()
        await first.stop()
        await final.stop()
    }

    @Test func aLoopStopsTheSessionWithoutRetrying() async throws {
        let server = try self.server(["/a": "/b", "/b": "/a"])
        let client = try WebSocketClient(configuration: self.configuration(server.url(path: "/a")))
        let recorder = EventRecorder(client.events)
        await client.start()
        let failed = await recorder.state(.failed)
        #expect(failed?.failure == .redirectFailed(.loop))
        let closed = recorder.records.first { $0.kind == .closed }
        #expect(closed?.reason?.name == "redirect_failed" && closed?.reason?.detail == "redirect loop")
        #expect(closed?.code == 302)
        #expect(!recorder.records.contains { $0.kind == .retryScheduled })
        #expect(server.acceptedConnectionCount == 2)
        await client.stop()
        await server.stop()
    }

    @Test func aDowngradeFromWssToWsStopsTheSession() async throws {
        let plain = try self.server([:])
        let secure = try self.server(["/feed": plain.url(path: "/feed")], tls: true)
        let client = try WebSocketClient(configuration: self.configuration(secure.url(path: "/feed")))
        let recorder = EventRecorder(client.events)
        await client.start()
        #expect(await recorder.state(.failed)?.failure == .redirectFailed(.downgrade))
        #expect(plain.acceptedConnectionCount == 0)
        await client.stop()
        await plain.stop()
        await secure.stop()
    }
    #endif
}
