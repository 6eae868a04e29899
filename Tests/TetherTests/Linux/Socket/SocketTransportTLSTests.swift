#if os(Linux)
import Foundation
import Testing
import TetherCore
import TetherPOSIX
import TetherTestServer
@testable import TetherWire
@testable import Tether
import TetherTestSupport

/// `wss://` through `SocketTransport` against TLS servers on loopback (a scripted peer and the test server), with a
/// throw-away CA made in memory. URLs name 127.0.0.1, which the certificates carry as an IP address (verification by
/// host name and SNI are covered by `TLSSessionTests`): a `localhost` URL could reach another test's `::1` listener.
/// Every wait is on an explicit signal; the time limit only turns a missing event into a failure.
@Suite(.timeLimit(.minutes(1))) struct SocketTransportTLSTests {
    static let authority = TestCertificateAuthority()
    static let valid = Self.authority.issue()
    static let trusting = TLSOptions(additionalTrustRoots: [.pem(Data(Self.authority.certificate.certificatePEM))])

    private func connect(_ url: URL, tls: TLSOptions = Self.trusting) -> ClientProbe {
        // The connect deadline covers TLS and the upgrade: scaled for a slowed process (ThreadSanitizer).
        ClientProbe(SocketTransport().connect(TransportRequest(
            url: url, connectTimeout: TestTime.scaled(.seconds(5)), tls: tls)))
    }

    @Test func anExtraCAOpensAndCarriesMessagesBothWaysThenClosesWithCloseNotify() async throws {
        var peer = try ScriptedPeer(tls: Self.valid.serverOptions)
        var client = self.connect(peer.url("/feed"))
        let server = await peer.accept()
        let request = try await server.open()
        #expect(request.header("Host") == "127.0.0.1:\(peer.port)")
        #expect(await client.next() == .opened(nil))

        let large = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        try await client.connection.send(.text("héllo 👋"))
        try await client.connection.send(.binary(Data(large)))
        #expect(try await server.nextMessage() == .text("héllo 👋"))
        #expect(try await server.nextMessage() == .binary(large))
        try await server.sendText("over TLS", fragmentSize: 3)
        try await server.sendBinary(large, fragmentSize: 100_000)
        #expect(await client.next() == .text("over TLS"))
        #expect(await client.next() == .binary(Data(large)))

        client.connection.close(code: 1000, reason: "")
        #expect(try await server.nextMessage() == .close(code: 1000, reason: ""))
        try await server.sendClose(code: 1000)
        #expect(await client.rest() == [.ended(.closedLocally)])
        // Not `.tlsFailed(.truncated)`: the client's close_notify came before its FIN.
        await peer.stop()
    }

    @Test func theSecondConnectionToAServerResumesTheFirstsSessionUnlessResumptionIsOff() async throws {
        let server = try TestServer(configuration: .init(tls: Self.authority.issue().serverTLS), scenario: .normal)
        // Options of this test's own: a context (and a session cache) no other test shares.
        var options = Self.trusting
        options.pins = [Self.authority.certificate.pin]
        var withoutResumption = options
        withoutResumption.sessionResumption = false
        for (index, tls) in [options, options, withoutResumption, withoutResumption].enumerated() {
            var client = self.connect(URL(string: server.url())!, tls: tls)
            #expect(await client.next() == .opened(nil))
            client.connection.close(code: 1000, reason: "")
            #expect(await client.rest() == [.ended(.closedLocally)])
            let record = try await server.waitForEnd(ofConnection: index + 1)
            #expect(record.tlsResumed == (index == 1), "connection \(index + 1)")
        }
        await server.stop()
    }

    /// A client reconnecting keeps its transport: however many other TLS option sets the process uses between its
    /// connections (a suite, an app with many endpoints), the transport still holds its context and the session.
    @Test func aTransportResumesItsSessionWhateverOtherOptionSetsTheProcessUsedMeanwhile() async throws {
        let server = try TestServer(configuration: .init(tls: Self.authority.issue().serverTLS), scenario: .normal)
        var options = Self.trusting
        options.pins = [Self.authority.certificate.pin]
        let transport = SocketTransport()
        for index in 1...2 {
            var client = ClientProbe(
                transport.connect(
                    TransportRequest(url: URL(string: server.url())!, connectTimeout: .seconds(5), tls: options)))
            #expect(await client.next() == .opened(nil))
            client.connection.close(code: 1000, reason: "")
            #expect(await client.rest() == [.ended(.closedLocally)])
            let record = try await server.waitForEnd(ofConnection: index)
            #expect(record.tlsResumed == (index == 2), "connection \(index)")
            if index == 1 {
                // More than the process keeps itself, each released at once.
                for _ in 0..<40 {
                    let digest = (0..<32).map { _ in UInt8.random(in: 0...255) }
                    _ = try TLSContext.sharedClient(
                        TLSClientOptions(
                            pins: ["sha256/" + Data(digest).base64EncodedString()], insecureSkipVerification: true))
                }
            }
        }
        await server.stop()
    }

    @Test func pingsGetTheirPongsOverTLS() async throws {
        let server = try TestServer(configuration: .init(tls: Self.valid.serverTLS), scenario: .normal)
        var client = self.connect(URL(string: server.url())!)
        #expect(await client.next() == .opened(nil))
        client.connection.sendPing(id: 41)
        client.connection.sendPing(id: 42)
        #expect(await client.next() == .pong(41))
        #expect(await client.next() == .pong(42))
        client.connection.close(code: 1000, reason: "")
        #expect(await client.rest() == [.ended(.closedLocally)])
        let record = try await server.waitForEnd(ofConnection: 1)
        #expect(record.pingsReceived.total == 2)
        #expect(record.end?.reason == .closeHandshakeCompleted(initiatedByServer: false))
        await server.stop()
    }

    static let certificateFailures: [(String, TestCertificate, TLSOptions, String)] = [
        ("wrong host", Self.authority.issue(hosts: ["wrong.example"]), Self.trusting, "hostname mismatch"),
        ("expired", Self.authority.issue(notBefore: -2 * 86_400, notAfter: -86_400), Self.trusting,
         "certificate expired"),
        ("self-signed", TestCertificateAuthority.selfSigned(), Self.trusting, "untrusted issuer"),
        ("unknown CA", TestCertificateAuthority().issue(), Self.trusting, "untrusted issuer"),
        ("no extra CA", Self.valid, TLSOptions(), "untrusted issuer"),
        ("pin mismatch", Self.valid,
         TLSOptions(additionalTrustRoots: Self.trusting.additionalTrustRoots, pins: [Self.authority.issue().pin]),
         "pin mismatch"),
    ]

    @Test(arguments: Self.certificateFailures.map(\.0))
    func aCertificateThatDoesNotVerifyEndsTLSFailedPermanentlyAndNeverOpens(name: String) async throws {
        let (_, certificate, tls, detail) = try #require(Self.certificateFailures.first { $0.0 == name })
        let server = try TestServer(configuration: .init(tls: certificate.serverTLS))
        var client = self.connect(URL(string: server.url())!, tls: tls)
        #expect(await client.rest() == [.ended(.tlsFailed(detail: detail, permanent: true))])
        // The server never saw an upgrade request: the connection ended in the TLS handshake.
        let record = try await server.waitForEnd(ofConnection: 1)
        #expect(record.request == nil)
        await server.stop()
    }

    @Test func aMatchingPinOfTheLeafOrTheCAOpens() async throws {
        let server = try TestServer(configuration: .init(tls: Self.valid.serverTLS))
        for pin in [Self.valid.pin, Self.authority.certificate.pin] {
            var tls = Self.trusting
            tls.pins = [pin]
            var client = self.connect(URL(string: server.url())!, tls: tls)
            #expect(await client.next() == .opened(nil))
            client.connection.close(code: 1000, reason: "")
            #expect(await client.rest() == [.ended(.closedLocally)])
        }
        await server.stop()
    }

    @Test func insecureSkipVerificationOpensDespiteAnUntrustedCertificateForAnotherHost() async throws {
        let server = try TestServer(
            configuration: .init(tls: TestCertificateAuthority.selfSigned(hosts: ["wrong.example"]).serverTLS))
        var client = self.connect(URL(string: server.url())!, tls: TLSOptions(insecureSkipVerification: true))
        #expect(await client.next() == .opened(nil))
        client.connection.close(code: 1000, reason: "")
        #expect(await client.rest() == [.ended(.closedLocally)])
        await server.stop()
    }

    @Test func aServerThatClosesWithoutCloseNotifyWhileOpenIsAnOrdinaryLoss() async throws {
        var peer = try ScriptedPeer(tls: Self.valid.serverOptions)
        var client = self.connect(peer.url())
        let server = await peer.accept()
        try await server.open()
        #expect(await client.next() == .opened(nil))
        try await server.sendText("before the cut")
        server.tcp.close()  // FIN without close_notify: a truncation
        #expect(await client.rest() == [.text("before the cut"), .ended(.receiveFailed)])
        await peer.stop()
    }

    @Test func aServerThatHangsUpAfterTheTLSHandshakeWithoutAnsweringEndsReceiveFailed() async throws {
        var peer = try ScriptedPeer(tls: Self.valid.serverOptions)
        var client = self.connect(peer.url())
        let server = await peer.accept()
        _ = try await server.readRequest()
        server.tcp.close()
        #expect(await client.rest() == [.ended(.receiveFailed)])
        await peer.stop()
    }

    @Test func aPlainHTTPAnswerToTheClientHelloIsARetryableTLSFailure() async throws {
        var peer = try ScriptedPeer()
        let url = URL(string: "wss://127.0.0.1:\(peer.port)/")!
        var client = self.connect(url)
        let server = await peer.accept()
        try await server.write(Array("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n".utf8))
        server.tcp.close()
        let events = await client.rest()
        guard case .ended(.tlsFailed(let detail, let permanent))? = events.first, events.count == 1 else {
            Issue.record("expected a TLS failure, got \(events)")
            return
        }
        #expect(detail.hasPrefix("handshake failed"))
        #expect(!permanent)
        await peer.stop()
    }

    @Test func aServerThatClosesDuringTheTLSHandshakeIsARetryableTLSFailure() async throws {
        var peer = try ScriptedPeer()
        var client = self.connect(URL(string: "wss://127.0.0.1:\(peer.port)/")!)
        let server = await peer.accept()
        // The peer reads the ClientHello, then half-closes: its FIN, and no RST. A socket closed with bytes unread
        // (a hello that arrived before the close), or that receives bytes after it, answers with RST, which can
        // overtake the FIN: under load the client then saw a reset instead of the end during its handshake.
        #expect(await server.readBytes() != nil)
        server.tcp.shutdownOutput()
        let detail = "handshake failed: the connection closed during the handshake"
        #expect(await client.rest() == [.ended(.tlsFailed(detail: detail, permanent: false))])
        await peer.stop()
    }
}
#endif
