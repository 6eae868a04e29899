#if os(Linux)
import Foundation
import Testing
import TetherCore
import TetherPOSIX
import TetherTestServer
@testable import TetherWire
@testable import Tether
import TetherTesting

/// `SocketTransport` through SOCKS5 proxies: a scripted proxy for the negotiation bytes and every refusal, and a
/// real `danted` (skipped with a message when it is not installed) for tunnels to the test server.
// Serialized: with three danted processes started and killed side by side, Foundation's `Process` once left two of
// them unreaped (zombies) while its reaper thread blocked in `wait4` on the third, so two `DanteProxy.stop()` calls
// waited forever in `waitUntilExit()` (seen in a backtrace of the hung test process; the cause of "waited forever"
// below). One danted at a time.
@Suite(.serialized, .timeLimit(.minutes(1))) struct SocketTransportSOCKSTests {
    static let authority = TestCertificateAuthority()
    static let certificate = Self.authority.issue(hosts: ["127.0.0.1"])
    static let trusting = TLSOptions(additionalTrustRoots: [.pem(Data(Self.authority.certificate.certificatePEM))])
    /// danted passes alone (`TETHER_DANTE_TESTS=1 swift test --filter SocketTransportSOCKSTests`), but inside the
    /// whole `swift test` on a loaded machine one of these tests once waited forever with danted running (Foundation's
    /// process reaping, see the suite's comment), so they run only when asked for.
    static let needsDante = ConditionTrait.enabled(
        if: DanteProxy.executable != nil && ProcessInfo.processInfo.environment["TETHER_DANTE_TESTS"] == "1",
        Comment(rawValue: DanteProxy.executable == nil ? DanteProxy.missing : "set TETHER_DANTE_TESTS=1 to run danted"))

    private func connect(_ url: URL, proxy: ProxyConfiguration, tls: TLSOptions = Self.trusting) -> ClientProbe {
        // A deadline far from what the tests measure: the parallel suite once kept a scripted proxy from answering in 5 s.
        let request = TransportRequest(url: url, connectTimeout: .seconds(30), tls: tls, proxy: proxy)
        return ClientProbe(SocketTransport().connect(request))
    }

    private func scripted(
        _ peer: ScriptedPeer, resolves: Bool = true, credentials: HTTPProxy.Credentials? = nil
    ) -> ProxyConfiguration {
        .socks(SOCKSProxy(host: "127.0.0.1", port: peer.port, proxyResolvesNames: resolves, credentials: credentials))
    }

    // MARK: A scripted proxy

    @Test func socks5hSendsTheOriginsNameAndCredentialsToTheProxyOnlyThenUpgradesInsideTheTunnel() async throws {
        var peer = try ScriptedPeer()
        let credentials = HTTPProxy.Credentials(user: "alice", password: "s3cret")
        var client = self.connect(
            URL(string: "ws://origin.invalid:8443/chat")!, proxy: self.scripted(peer, credentials: credentials))
        let server = await peer.accept()
        #expect(await server.read(count: 4) == [0x05, 0x02, 0x00, 0x02])  // no authentication, username/password
        try await server.write([0x05, 0x02])
        #expect(await server.read(count: 14) == [0x01, 5] + Array("alice".utf8) + [6] + Array("s3cret".utf8))
        try await server.write([0x01, 0x00])
        let name = Array("origin.invalid".utf8)
        let connect = await server.read(count: 7 + name.count)
        #expect(connect == [0x05, 0x01, 0x00, 0x03, UInt8(name.count)] + name + [0x20, 0xFB])
        try await server.write([0x05, 0x00, 0x00, 0x01, 127, 0, 0, 1, 0x1F, 0x90])
        let request = try await server.open()  // from here the peer plays the origin
        #expect(request.target == "/chat")
        #expect(request.header("Host") == "origin.invalid:8443")
        #expect(await client.next() == .opened(nil))
        client.connection.close(code: 1000, reason: "")
        _ = try await server.nextMessage()
        try await server.sendClose(code: 1000)
        #expect(await client.rest() == [.ended(.closedLocally)])
        await peer.stop()
    }

    @Test func socks5ResolvesTheOriginItselfAndSendsItsAddress() async throws {
        var peer = try ScriptedPeer()
        var client = self.connect(URL(string: "ws://localhost:8080/")!, proxy: self.scripted(peer, resolves: false))
        let server = await peer.accept()
        #expect(await server.read(count: 3) == [0x05, 0x01, 0x00])  // no credentials: one method
        try await server.write([0x05, 0x00])
        let head = await server.read(count: 4)
        let addressLength = head?.last == 0x01 ? 4 : 16
        let rest = await server.read(count: addressLength + 2)
        #expect(head?.prefix(3) == [0x05, 0x01, 0x00])
        #expect(rest.map { Array($0.suffix(2)) } == [0x1F, 0x90])
        let address = rest.map { Array($0.prefix(addressLength)) }
        #expect(address == [127, 0, 0, 1] || address == Array(repeating: 0, count: 15) + [1])
        try await server.write([0x05, 0x05, 0x00, 0x01, 0, 0, 0, 0, 0, 0])  // connection refused
        #expect(await client.rest() == [.ended(.socksRejected(.connectionRefused))])
        await peer.stop()
    }

    /// Each reply code is a refusal of its own (recorded as `proxy_rejected` naming SOCKS and the reply).
    @Test(arguments: [
        (UInt8(0x01), TetherCore.SOCKSRefusal.generalFailure), (0x02, .notAllowedByRuleset), (0x03, .networkUnreachable),
        (0x04, .hostUnreachable), (0x05, .connectionRefused), (0x06, .ttlExpired), (0x07, .commandNotSupported),
        (0x08, .addressTypeNotSupported), (0x2A, .unassigned(0x2A)),
    ])
    func eachReplyCodeEndsWithItsOwnSOCKSRefusal(reply: UInt8, refusal: TetherCore.SOCKSRefusal) async throws {
        var peer = try ScriptedPeer()
        var client = self.connect(URL(string: "wss://origin.invalid/")!, proxy: self.scripted(peer))
        let server = await peer.accept()
        _ = await server.read(count: 3)
        try await server.write([0x05, 0x00])
        _ = await server.read(count: 7 + "origin.invalid".utf8.count)
        try await server.write([0x05, reply, 0x00, 0x01, 0, 0, 0, 0, 0, 0])
        #expect(await client.rest() == [.ended(.socksRejected(refusal))])
        await peer.stop()
    }

    @Test func refusedCredentialsAndNoAcceptableMethodAreTheirOwnRefusalsAndShowNoSecret() async throws {
        let credentials = HTTPProxy.Credentials(user: "mallory", password: "hunter2")
        var peer = try ScriptedPeer()
        var refused = self.connect(
            URL(string: "ws://origin.invalid/")!, proxy: self.scripted(peer, credentials: credentials))
        var server = await peer.accept()
        _ = await server.read(count: 4)
        try await server.write([0x05, 0x02])
        _ = await server.read(count: 2 + 7 + 1 + 7)
        try await server.write([0x01, 0x01])
        let ends = await refused.rest()
        #expect(ends == [.ended(.socksRejected(.authenticationFailed))])
        #expect(!"\(ends)".contains("hunter2") && !"\(ends)".contains("mallory"))

        var anonymous = self.connect(URL(string: "ws://origin.invalid/")!, proxy: self.scripted(peer))
        server = await peer.accept()
        _ = await server.read(count: 3)
        try await server.write([0x05, 0xFF])
        #expect(await anonymous.rest() == [.ended(.socksRejected(.noAcceptableMethod))])
        await peer.stop()
    }

    @Test func anAnswerThatIsNotSOCKS5IsInvalidAndAHangUpIsAReceiveFailure() async throws {
        var peer = try ScriptedPeer()
        var garbled = self.connect(URL(string: "ws://origin.invalid/")!, proxy: self.scripted(peer))
        var server = await peer.accept()
        _ = await server.read(count: 3)
        try await server.write(Array("HTTP/1.1 400 Bad Request\r\n\r\n".utf8))
        #expect(await garbled.rest() == [.ended(.handshakeInvalid(detail: "the SOCKS proxy's answer is malformed"))])

        var hungUp = self.connect(URL(string: "ws://origin.invalid/")!, proxy: self.scripted(peer))
        server = await peer.accept()
        _ = await server.read(count: 3)
        server.reset()
        #expect(await hungUp.rest() == [.ended(.receiveFailed)])
        await peer.stop()
    }

    @Test func configurationAndEnvironmentNameSOCKSProxies() {
        let proxy = SOCKSProxy(url: "socks5h://alice:s3cr%40t@proxy.corp")
        #expect(proxy?.host == "proxy.corp" && proxy?.port == 1080 && proxy?.proxyResolvesNames == true)
        #expect(proxy?.credentials == HTTPProxy.Credentials(user: "alice", password: "s3cr@t"))
        #expect(proxy?.description == "socks5h://proxy.corp:1080 (with credentials)")
        #expect(SOCKSProxy(url: "socks5://[::1]:9050")?.description == "socks5://[::1]:9050")
        #expect(SOCKSProxy(url: "socks4://proxy:1080") == nil)
        #expect(SOCKSProxy(url: "http://proxy:1080") == nil)

        let decided = ProxyEnvironment.decide(
            host: "example.com", port: 443, secure: true, variables: ["all_proxy": "socks5h://p:1080"])
        #expect(decided == .socks(SOCKSProxy(host: "p", port: 1080)))
        let bypassed = ProxyEnvironment.decide(
            host: "example.com", port: 443, secure: true,
            variables: ["all_proxy": "socks5://p:1080", "no_proxy": ".example.com"])
        #expect(bypassed == .direct)
    }

    // MARK: danted

    @Test(needsDante, arguments: [true, false])
    func wsAndWssThroughDanteVerifyTheOriginInsideTheTunnel(proxyResolvesNames: Bool) async throws {
        let proxy = try await DanteProxy()
        defer { proxy.stop() }
        let named = try #require(SOCKSProxy(url: proxy.url(proxyResolvesNames: proxyResolvesNames)))
        let configuration = ProxyConfiguration.socks(named)
        let plain = try TestServer(scenario: .echo)
        var client = self.connect(URL(string: plain.url())!, proxy: configuration)
        #expect(await client.next() == .opened(nil))
        try await client.connection.send(.text("via danted"))
        #expect(await client.next() == .text("via danted"))
        client.connection.close(code: 1000, reason: "")
        #expect(await client.rest() == [.ended(.closedLocally)])
        await plain.stop()

        let secure = try TestServer(configuration: .init(tls: Self.certificate.serverTLS), scenario: .echo)
        var tls = self.connect(URL(string: secure.url())!, proxy: configuration)
        #expect(await tls.next() == .opened(nil))
        try await tls.connection.send(.binary(Data(repeating: 7, count: 100_000)))
        #expect(await tls.next() == .binary(Data(repeating: 7, count: 100_000)))
        tls.connection.close(code: 1000, reason: "")
        #expect(await tls.rest() == [.ended(.closedLocally)])
        await secure.stop()

        // The certificate is checked against the origin, not the proxy.
        let wrongHost = try TestServer(
            configuration: .init(tls: Self.authority.issue(hosts: ["wrong.example"]).serverTLS))
        var refused = self.connect(URL(string: wrongHost.url())!, proxy: configuration)
        #expect(await refused.rest() == [.ended(.tlsFailed(detail: "hostname mismatch", permanent: true))])
        await wrongHost.stop()
    }

    @Test(needsDante) func danteRefusesADestinationItsRulesForbidAsNotAllowedByRuleset() async throws {
        let proxy = try await DanteProxy()
        defer { proxy.stop() }
        // Its rules allow loopback destinations only; 192.0.2.1 (TEST-NET-1) is refused before any packet leaves.
        var client = self.connect(
            URL(string: "ws://192.0.2.1:9/")!, proxy: .socks(SOCKSProxy(host: "127.0.0.1", port: proxy.port)))
        #expect(await client.rest() == [.ended(.socksRejected(.notAllowedByRuleset))])
    }
}
#endif
