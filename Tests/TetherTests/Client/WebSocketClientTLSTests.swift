#if os(Linux)
import Foundation
import Testing
@testable import Tether
import TetherCore
import TetherPOSIX
import TetherTestServer
import TetherTesting

/// The client over `wss://`: the heartbeat runs as over plain TCP, and a certificate that does not verify stops the
/// session visibly instead of retrying.
@Suite(.timeLimit(.minutes(1)))
struct WebSocketClientTLSTests {
    static let authority = TestCertificateAuthority()
    static let trusting = TLSOptions(additionalTrustRoots: [.pem(Data(Self.authority.certificate.certificatePEM))])

    private func configuration(_ server: TestServer, host: String = "127.0.0.1") -> WebSocketConfiguration {
        var configuration = WebSocketConfiguration(
            url: URL(string: "wss://\(host):\(server.port)/")!, heartbeatInterval: .milliseconds(50),
            // Generous: these tests are about what happens, not when; a loaded machine must not trip a pong timeout.
            heartbeatTimeout: .seconds(5), pathMonitoring: .none)
        configuration.tls = Self.trusting
        return configuration
    }

    @Test func theHeartbeatsPingsAndPongsRunOverTLSAndAMessageEchoes() async throws {
        let server = try TestServer(configuration: .init(tls: Self.authority.issue().serverTLS), scenario: .echo)
        let client = try WebSocketClient(configuration: self.configuration(server))
        let recorder = EventRecorder(client.events)
        await client.start()
        #expect(await recorder.record(.opened) != nil)
        #expect(await recorder.record(.pong) != nil)
        #expect(await recorder.record(.pong) != nil)
        try await client.send(text: "through the tunnel")
        #expect(await recorder.message() == .text("through the tunnel"))
        await client.stop()
        let record = try await server.waitForEnd(ofConnection: 1)
        #expect(record.pingsReceived.total >= 2)
        #expect(recorder.records.filter { $0.kind == .closed }.allSatisfy { $0.reason == .userStopped })
        await server.stop()
    }

    @Test func anExpiredCertificateStopsTheSessionWithTLSFailedAndNoRetry() async throws {
        let expired = Self.authority.issue(notBefore: -2 * 86_400, notAfter: -86_400)
        let server = try TestServer(configuration: .init(tls: expired.serverTLS))
        let client = try WebSocketClient(configuration: self.configuration(server))
        let recorder = EventRecorder(client.events)
        await client.start()
        let closed = await recorder.record(.closed)
        #expect(closed?.reason == .tlsFailed(detail: "certificate expired"))
        #expect(closed?.reason?.name == "tls_failed")
        let failed = await recorder.state(.failed)
        #expect(failed?.failure == .tlsFailed(detail: "certificate expired"))
        let snapshot = await recorder.wait { _ in true }
        #expect(snapshot?.records.contains { $0.kind == .opened } == false)
        #expect(snapshot?.records.contains { $0.kind == .retryScheduled } == false)
        #expect(server.connections.count == 1)  // no retry storm
        await client.stop()
        await server.stop()
    }

    @Test func aServerOfferingNothingNewerThanTLS11FailsWithProtocolVersionAndIsRetriedWithBackoff() async throws {
        var legacy = Self.authority.issue().serverOptions
        legacy.legacyVersionsOnlyForTesting = true
        let server = try TestServer(configuration: .init(tls: TestServerTLS(legacy)))
        var configuration = self.configuration(server)
        configuration.backoff = BackoffPolicy(
            base: .milliseconds(50), factor: 1, cap: .milliseconds(50), jitterPercent: 0)
        let client = try WebSocketClient(configuration: configuration)
        let recorder = EventRecorder(client.events)
        await client.start()
        // Not a certificate failure: the attempt fails visibly, and the session backs off and tries again.
        let first = await recorder.record(.closed)
        #expect(first?.reason == .tlsFailed(detail: "protocol version") && first?.generation == 1)
        let retry = await recorder.record(.retryScheduled)
        #expect(retry?.attempt == 1 && retry?.delay == 50)
        let second = await recorder.record(.closed)
        #expect(second?.reason == .tlsFailed(detail: "protocol version") && second?.generation == 2)
        let failure = await client.state.failure
        await client.stop()
        #expect(failure == nil)
        let records = recorder.records
        #expect(!records.contains { $0.kind == .opened })
        #expect(!recorder.events.contains { event in
            if case .stateChanged(let state, _) = event { return state.phase == .failed }
            return false
        })
        // The server found no version it shares with the client: no upgrade request was ever read.
        let record = try await server.waitForEnd(ofConnection: 1)
        #expect(record.end?.reason == .tlsFailed("protocol version"))
        #expect(record.request == nil)
        await server.stop()
    }

    @Test(arguments: [false, true])
    func aReconnectAfterTheServerDropsTheConnectionResumesTheTLSSession(tls12Only: Bool) async throws {
        var options = Self.authority.issue().serverOptions
        options.tls12OnlyForTesting = tls12Only
        // The first connection is reset (no close frame, no close_notify), as when the network drops it.
        let server = try TestServer(configuration: .init(tls: TestServerTLS(options))) { context in
            context.index == 1 ? .reset(afterMilliseconds: 100) : .echo
        }
        var configuration = self.configuration(server)
        configuration.backoff = BackoffPolicy(
            base: .milliseconds(50), factor: 1, cap: .milliseconds(50), jitterPercent: 0)
        let client = try WebSocketClient(configuration: configuration)
        let recorder = EventRecorder(client.events)
        await client.start()
        #expect(await recorder.record(.opened) != nil)
        #expect(await recorder.record(.opened) != nil)
        try await client.send(text: "after the drop")
        #expect(await recorder.message() == .text("after the drop"))
        await client.stop()
        let first = try await server.waitForEnd(ofConnection: 1)
        let second = try await server.waitForEnd(ofConnection: 2)
        #expect(first.tlsResumed == false)
        #expect(second.tlsResumed == true)
        await server.stop()
    }

    @Test func aPinMismatchStillFailsOnAFreshContextAfterResumedConnections() async throws {
        let server = try TestServer(configuration: .init(tls: Self.authority.issue().serverTLS), scenario: .echo)
        // Resumable sessions for this server under the trusting options...
        for _ in 0..<2 {
            let client = try WebSocketClient(configuration: self.configuration(server))
            let recorder = EventRecorder(client.events)
            await client.start()
            #expect(await recorder.record(.opened) != nil)
            await client.stop()
        }
        #expect(try await server.waitForEnd(ofConnection: 2).tlsResumed == true)
        // ...are never offered under other options: the pin is checked on a full handshake, and fails.
        var configuration = self.configuration(server)
        configuration.tls.pins = [TestCertificateAuthority.selfSigned().pin]
        let client = try WebSocketClient(configuration: configuration)
        let recorder = EventRecorder(client.events)
        await client.start()
        let closed = await recorder.record(.closed)
        #expect(closed?.reason == .tlsFailed(detail: "pin mismatch"))
        await client.stop()
        let record = try await server.waitForEnd(ofConnection: 3)
        #expect(record.request == nil)
        await server.stop()
    }

    @Test func aMalformedPinIsAConfigurationError() {
        var configuration = WebSocketConfiguration(url: URL(string: "wss://example.com/")!)
        configuration.tls.pins = ["sha256/not-a-digest"]
        #expect(throws: WebSocketConfigurationError.self) { try WebSocketClient(configuration: configuration) }
    }
}
#endif
