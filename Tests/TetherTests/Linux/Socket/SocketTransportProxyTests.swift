#if os(Linux)
import Foundation
import Testing
import TetherCore
import TetherPOSIX
import TetherTestServer
@testable import TetherWire
@testable import Tether
import TetherTesting

/// `SocketTransport` through HTTP CONNECT proxies: a scripted proxy for every answer a proxy can give, and a real
/// `tinyproxy` (skipped with a message when it is not installed) for tunnels to the test server, Basic
/// authentication, refusals and the environment variables.
@Suite(.timeLimit(.minutes(1))) struct SocketTransportProxyTests {
    static let authority = TestCertificateAuthority()
    static let certificate = Self.authority.issue(hosts: ["127.0.0.1"])
    static let trusting = TLSOptions(additionalTrustRoots: [.pem(Data(Self.authority.certificate.certificatePEM))])

    private func connect(_ url: URL, proxy: ProxyConfiguration, tls: TLSOptions = Self.trusting) -> ClientProbe {
        let request = TransportRequest(url: url, connectTimeout: .seconds(5), tls: tls, proxy: proxy)
        return ClientProbe(SocketTransport().connect(request))
    }

    private func scriptedProxy(_ peer: ScriptedPeer, credentials: HTTPProxy.Credentials? = nil) -> ProxyConfiguration {
        .http(HTTPProxy(host: "127.0.0.1", port: peer.port, credentials: credentials))
    }

    // MARK: A scripted proxy

    @Test func aTunnelOpenedWith200CarriesTheUpgradeToTheOriginNamedInConnect() async throws {
        var peer = try ScriptedPeer()
        let credentials = HTTPProxy.Credentials(user: "alice", password: "s3cret")
        // The origin's name is never resolved by the client: only the proxy's address is.
        var client = self.connect(
            URL(string: "ws://origin.invalid:8443/chat")!, proxy: self.scriptedProxy(peer, credentials: credentials))
        let server = await peer.accept()
        let connect = await server.readHead()
        #expect(connect == "CONNECT origin.invalid:8443 HTTP/1.1\r\nHost: origin.invalid:8443\r\n"
            + "Proxy-Authorization: Basic YWxpY2U6czNjcmV0\r\n\r\n")
        try await server.write(Array("HTTP/1.1 200 Connection established\r\n\r\n".utf8))
        let request = try await server.open()  // from here the peer plays the origin, through the "tunnel"
        #expect(request.target == "/chat")
        #expect(request.header("Host") == "origin.invalid:8443")
        #expect(request.header("Proxy-Authorization") == nil)  // the credentials went to the proxy only
        #expect(await client.next() == .opened(nil))
        try await client.connection.send(.text("through"))
        #expect(try await server.nextMessage() == .text("through"))
        client.connection.close(code: 1000, reason: "")
        _ = try await server.nextMessage()
        try await server.sendClose(code: 1000)
        #expect(await client.rest() == [.ended(.closedLocally)])
        await peer.stop()
    }

    @Test(arguments: [407, 403, 502])
    func aRefusalEndsProxyRejectedWithItsStatus(status: Int) async throws {
        var peer = try ScriptedPeer()
        var client = self.connect(URL(string: "wss://origin.invalid/")!, proxy: self.scriptedProxy(peer))
        let server = await peer.accept()
        _ = await server.readHead()
        try await server.write(Array("HTTP/1.1 \(status) No\r\nRetry-After: 3\r\nContent-Length: 0\r\n\r\n".utf8))
        #expect(await client.rest() == [.ended(.proxyRejected(status: status, retryAfter: 3_000))])
        await peer.stop()
    }

    @Test func aMalformedAnswerOrAHangUpBeforeItEndsTheAttempt() async throws {
        var peer = try ScriptedPeer()
        var malformed = self.connect(URL(string: "ws://origin.invalid/")!, proxy: self.scriptedProxy(peer))
        let first = await peer.accept()
        _ = await first.readHead()
        try await first.write(Array("SSH-2.0-OpenSSH\r\n\r\n".utf8))
        let detail = "the proxy's answer to CONNECT is malformed"
        #expect(await malformed.rest() == [.ended(.handshakeInvalid(detail: detail))])

        var hungUp = self.connect(URL(string: "ws://origin.invalid/")!, proxy: self.scriptedProxy(peer))
        let second = await peer.accept()
        _ = await second.readHead()
        second.tcp.close()
        #expect(await hungUp.rest() == [.ended(.receiveFailed)])
        await peer.stop()
    }

    @Test func aProxyNobodyListensOnIsProxyUnreachable() async throws {
        let probe = try TCPListener.bind(host: "127.0.0.1")
        let port = probe.port
        await probe.close()
        var client = self.connect(
            URL(string: "ws://origin.invalid/")!, proxy: .http(HTTPProxy(host: "127.0.0.1", port: port)))
        let tried = [ConnectAttempt(address: "127.0.0.1:\(port)", failure: .refused)]  // the proxy's address
        #expect(await client.rest() == [.ended(.proxyUnreachable(.refused, tried: tried))])
    }

    @Test func credentialsNeverShowInADescription() throws {
        let proxy = try #require(HTTPProxy(url: "http://alice:s%33cret@proxy.example:3128"))
        #expect(proxy.credentials == HTTPProxy.Credentials(user: "alice", password: "s3cret"))
        #expect(proxy.port == 3128)
        let request = TransportRequest(url: URL(string: "wss://example.com/")!, proxy: .http(proxy))
        for text in [String(describing: proxy), String(reflecting: proxy), String(describing: request),
                     String(reflecting: request.proxy)] {
            #expect(!text.contains("s3cret") && !text.contains("alice"), "\(text)")
        }
        #expect(proxy.description == "http://proxy.example:3128 (with credentials)")
    }

    // MARK: tinyproxy

    @Test(.enabled(if: TinyProxy.executable != nil, Comment(rawValue: TinyProxy.missing)))
    func wsThroughTinyproxyWithBasicAuthFromTheProxyURLsUserInfo() async throws {
        let proxy = try await TinyProxy(basicAuth: (user: "alice", password: "s3cret"))
        defer { proxy.stop() }
        let server = try TestServer(scenario: .echo)
        let named = try #require(HTTPProxy(url: proxy.url(user: "alice", password: "s3cret")))
        let configuration = ProxyConfiguration.http(named)
        var client = self.connect(URL(string: server.url())!, proxy: configuration)
        #expect(await client.next() == .opened(nil))
        try await client.connection.send(.text("via tinyproxy"))
        #expect(await client.next() == .text("via tinyproxy"))
        client.connection.close(code: 1000, reason: "")
        #expect(await client.rest() == [.ended(.closedLocally)])
        await server.stop()
    }

    @Test(.enabled(if: TinyProxy.executable != nil, Comment(rawValue: TinyProxy.missing)))
    func wssThroughTinyproxyVerifiesTheOriginInsideTheTunnel() async throws {
        let proxy = try await TinyProxy()
        defer { proxy.stop() }
        let configuration = ProxyConfiguration.http(HTTPProxy(host: "127.0.0.1", port: proxy.port))
        let server = try TestServer(configuration: .init(tls: Self.certificate.serverTLS), scenario: .echo)
        var client = self.connect(URL(string: server.url())!, proxy: configuration)
        #expect(await client.next() == .opened(nil))
        try await client.connection.send(.binary(Data(repeating: 9, count: 300_000)))
        #expect(await client.next() == .binary(Data(repeating: 9, count: 300_000)))
        client.connection.close(code: 1000, reason: "")
        #expect(await client.rest() == [.ended(.closedLocally)])
        await server.stop()

        // The certificate is checked against the origin, not the proxy: one for another host fails.
        let wrongHost = try TestServer(
            configuration: .init(tls: Self.authority.issue(hosts: ["wrong.example"]).serverTLS))
        var refused = self.connect(URL(string: wrongHost.url())!, proxy: configuration)
        #expect(await refused.rest() == [.ended(.tlsFailed(detail: "hostname mismatch", permanent: true))])
        await wrongHost.stop()
    }

    @Test(.enabled(if: TinyProxy.executable != nil, Comment(rawValue: TinyProxy.missing)))
    func tinyproxysRefusalsAreTypedWithTheirStatus() async throws {
        let server = try TestServer(scenario: .echo)
        let guarded = try await TinyProxy(basicAuth: (user: "alice", password: "s3cret"))
        defer { guarded.stop() }
        let wrongPassword = HTTPProxy(
            host: "127.0.0.1", port: guarded.port, credentials: .init(user: "alice", password: "wrong"))
        var unauthorized = self.connect(URL(string: server.url())!, proxy: .http(wrongPassword))
        // tinyproxy answers a wrong password with 401 (no credentials at all get 407).
        #expect(await unauthorized.rest() == [.ended(.proxyRejected(status: 401, retryAfter: nil))])

        let closed = try await TinyProxy(allow: "10.9.9.9")
        defer { closed.stop() }
        var forbidden = self.connect(
            URL(string: server.url())!, proxy: .http(HTTPProxy(host: "127.0.0.1", port: closed.port)))
        #expect(await forbidden.rest() == [.ended(.proxyRejected(status: 403, retryAfter: nil))])
        await server.stop()
    }

    @Test(.enabled(if: TinyProxy.executable != nil, Comment(rawValue: TinyProxy.missing)))
    func aClientRefusedByTheProxyStopsWithProxyRejectedAndNoCredentialInItsRecords() async throws {
        let proxy = try await TinyProxy(basicAuth: (user: "alice", password: "s3cret"))
        defer { proxy.stop() }
        let server = try TestServer(scenario: .echo)
        var configuration = WebSocketConfiguration(url: URL(string: server.url())!, pathMonitoring: .none)
        configuration.proxy = .http(
            HTTPProxy(host: "127.0.0.1", port: proxy.port, credentials: .init(user: "mallory", password: "hunter2")))
        let client = try WebSocketClient(configuration: configuration)
        let recorder = EventRecorder(client.events)
        await client.start()
        let failed = await recorder.state(.failed)
        #expect(failed?.failure == .proxyRejected(status: 401))
        let snapshot = await recorder.wait { $0.records.contains { $0.kind == .closed } }
        await client.stop()
        let closed = snapshot?.records.first { $0.kind == .closed }
        #expect(closed?.reason?.name == "proxy_rejected" && closed?.code == 401)
        #expect(snapshot?.records.contains { $0.kind == .retryScheduled } == false)
        let everything = "\(snapshot?.events ?? []) \(configuration.proxy)"
        #expect(!everything.contains("hunter2") && !everything.contains("mallory"))
        #expect(server.connections.isEmpty)  // the proxy never let it through
        await server.stop()
    }

    @Test(.enabled(if: TinyProxy.executable != nil, Comment(rawValue: TinyProxy.missing)))
    func theEnvironmentVariablesPickTheProxyAndNoProxyBypassesIt() async throws {
        let proxy = try await TinyProxy(basicAuth: (user: "alice", password: "s3cret"))
        defer { proxy.stop() }
        let server = try TestServer(scenario: .echo)
        let url = URL(string: server.url())!
        // Through the proxy: its 407 proves it, with the credentials of the variable's user info it opens.
        var anonymous = self.connect(url, proxy: .variables(["HTTP_PROXY": proxy.url()]))
        #expect(await anonymous.rest() == [.ended(.proxyRejected(status: 407, retryAfter: nil))])
        let withUser = proxy.url(user: "alice", password: "s3cret")
        for variables in [["http_proxy": withUser], ["ALL_PROXY": withUser]] {
            var client = self.connect(url, proxy: .variables(variables))
            #expect(await client.next() == .opened(nil), "\(variables.keys)")
            client.connection.close(code: 1000, reason: "")
            _ = await client.rest()
        }
        // Not through it: https_proxy is for wss://, and no_proxy lists the address.
        let dead = "http://127.0.0.1:1"
        for variables in [["https_proxy": dead], ["http_proxy": dead, "no_proxy": "example.com, 127.0.0.1"]] {
            var client = self.connect(url, proxy: .variables(variables))
            #expect(await client.next() == .opened(nil), "\(variables.keys)")
            client.connection.close(code: 1000, reason: "")
            _ = await client.rest()
        }
        await server.stop()
    }
}

/// `ProxyEnvironment`: which variable applies, and what `no_proxy` bypasses.
@Suite struct ProxyEnvironmentTests {
    private func decide(_ host: String, port: Int = 443, secure: Bool = true, _ variables: [String: String])
        -> ProxyEnvironment.Decision
    {
        ProxyEnvironment.decide(host: host, port: port, secure: secure, variables: variables)
    }

    @Test func theSchemesVariableThenAllProxyInEitherCaseLowerFirst() {
        let a = HTTPProxy(host: "a.proxy", port: 3128)
        let b = HTTPProxy(host: "b.proxy", port: 8080)
        #expect(self.decide("example.com", ["https_proxy": "http://a.proxy:3128"]) == .proxy(a))
        #expect(self.decide("example.com", ["HTTPS_PROXY": "a.proxy:3128"]) == .proxy(a))
        let both = ["https_proxy": "a.proxy:3128", "HTTPS_PROXY": "b.proxy:8080"]
        #expect(self.decide("example.com", both) == .proxy(a))
        #expect(self.decide("example.com", ["http_proxy": "a.proxy:3128"]) == .direct)  // wss uses https_proxy
        #expect(self.decide("example.com", secure: false, ["http_proxy": "a.proxy:3128"]) == .proxy(a))
        #expect(self.decide("example.com", ["all_proxy": "http://b.proxy:8080"]) == .proxy(b))
        #expect(self.decide("example.com", [:]) == .direct)
        #expect(self.decide("example.com", ["https_proxy": "socks5://b.proxy:1080"])
            == .socks(SOCKSProxy(host: "b.proxy", port: 1080, proxyResolvesNames: false)))
        #expect(self.decide("example.com", ["https_proxy": "https://b.proxy:443"]) == .unsupported)
        #expect(self.decide("example.com", ["https_proxy": "  "]) == .direct)
    }

    @Test func noProxyTakesDomainSuffixesAddressesPortsAndAStar() {
        let proxied = ["https_proxy": "a.proxy:3128"]
        func bypassed(_ host: String, port: Int = 443, _ noProxy: String) -> Bool {
            var variables = proxied
            variables["no_proxy"] = noProxy
            return self.decide(host, port: port, variables) == .direct
        }
        #expect(bypassed("example.com", "example.com"))
        #expect(bypassed("api.example.com", "example.com"))
        #expect(bypassed("api.example.com", ".example.com"))
        #expect(bypassed("API.Example.com.", "example.com"))
        #expect(!bypassed("badexample.com", "example.com"))
        #expect(!bypassed("example.com", "api.example.com"))
        #expect(bypassed("10.1.2.3", "localhost, 10.1.2.3"))
        #expect(!bypassed("10.1.2.3", "2.3"))  // addresses match exactly, never as suffixes
        #expect(bypassed("::1", "[::1]"))
        #expect(bypassed("::1", "::1"))
        #expect(bypassed("example.com", port: 8443, "example.com:8443"))
        #expect(!bypassed("example.com", port: 443, "example.com:8443"))
        #expect(bypassed("anything.at.all", "*"))
        var upper = proxied
        upper["NO_PROXY"] = "example.com"
        #expect(self.decide("example.com", upper) == .direct)
    }

    /// `no_proxy` CIDR ranges: host, `no_proxy`, and whether the host goes direct (true) or through the proxy.
    static let cidrCases: [(host: String, noProxy: String, bypassed: Bool)] = [
        // IPv4
        ("10.1.2.3", "10.0.0.0/8", true),
        ("11.0.0.1", "10.0.0.0/8", false),
        ("192.168.1.77", "192.168.1.0/24", true),
        ("192.168.1.255", "192.168.1.0/24", true),
        ("192.168.2.1", "192.168.1.0/24", false),
        ("172.31.255.255", "172.16.0.0/12", true),  // a prefix that ends inside a byte
        ("172.32.0.0", "172.16.0.0/12", false),
        ("10.1.2.3", "10.1.2.3/32", true),
        ("10.1.2.4", "10.1.2.3/32", false),
        ("8.8.8.8", "0.0.0.0/0", true),
        ("10.200.0.1", "10.1.2.3/8", true),  // the address's bits past the prefix are ignored
        ("10.1.2.3.", "10.0.0.0/8", true),  // a trailing dot, as for names
        ("10.1.2.3", "example.com, 10.0.0.0/8", true),
        ("10.1.2.3", " 10.0.0.0/8 ,", true),
        // IPv6
        ("fd12:3456::1", "fd00::/8", true),
        ("fe80::1", "fd00::/8", false),
        ("::1", "::1/128", true),
        ("[::1]", "::1/128", true),
        ("::2", "::1/128", false),
        ("2001:db8:abcd:12::1", "2001:db8:abcd::/48", true),
        ("2001:db8:abce::1", "2001:db8:abcd::/48", false),
        ("2001:db8::1", "[2001:db8::]/32", true),
        ("FD00::1", "FD00::/8", true),
        ("fe80::1%eth0", "fe80::/10", true),  // the zone names a link, not an address
        // Across families: an IPv4-mapped host is in IPv4 ranges; an IPv4 host is in no IPv6 range.
        ("::ffff:10.1.2.3", "10.0.0.0/8", true),
        ("::ffff:10.1.2.3", "::ffff:0:0/96", true),
        ("::ffff:11.1.2.3", "10.0.0.0/8", false),
        ("10.1.2.3", "::/0", false),
        ("fd00::1", "0.0.0.0/0", false),
        // Host names never match a range.
        ("example.com", "0.0.0.0/0", false),
        ("10.example.com", "10.0.0.0/8", false),
        ("localhost", "127.0.0.0/8", false),
        // Malformed ranges match nothing, and the rest of the list still applies.
        ("10.1.2.3", "10.0.0.0/33", false),
        ("fd00::1", "fd00::/129", false),
        ("10.1.2.3", "10.0.0.0/", false),
        ("10.1.2.3", "10.0.0.0/-8", false),
        ("10.1.2.3", "10.0.0.0/+8", false),
        ("10.1.2.3", "10.0.0.0/8x", false),
        ("10.1.2.3", "10.0.0.0/8/8", false),
        ("10.1.2.3", "10.0.0.0/8:443", false),  // no port after a range
        ("10.1.2.3", "10.0.0/8", false),
        ("10.1.2.3", "10.0.0.256/8", false),
        ("10.1.2.3", "/8", false),
        ("fd00::1", "fd00:::/8", false),
        ("fe80::1", "fe80::%eth0/10", false),
        ("10.1.2.3", "10.0.0.0/33, 10.1.2.3", true),
    ]

    @Test(arguments: Self.cidrCases)
    func noProxyTakesCIDRRangesOfAddresses(host: String, noProxy: String, bypassed: Bool) {
        let proxy = HTTPProxy(host: "a.proxy", port: 3128)
        let decision = self.decide(host, ["https_proxy": "a.proxy:3128", "no_proxy": noProxy])
        #expect(decision == (bypassed ? .direct : .proxy(proxy)))
    }

    @Test func aProxyURLsUserInfoIsPercentDecodedAndOtherSchemesRefused() throws {
        let proxy = try #require(HTTPProxy(url: "http://us%40er:p%3Ass@[::1]:3128"))
        #expect(proxy.host == "::1" && proxy.port == 3128)
        #expect(proxy.credentials == .init(user: "us@er", password: "p:ss"))
        #expect(HTTPProxy(url: "https://proxy:443") == nil)
        #expect(HTTPProxy(url: "socks5://proxy:1080") == nil)
        #expect(HTTPProxy(url: "proxy.example")?.port == 80)
    }
}
#endif
