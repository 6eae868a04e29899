#if os(Linux)
import Foundation
import Testing
import TetherCore
import TetherPOSIX
import TetherTestServer
import TetherTestSupport
@testable import TetherWire
@testable import Tether

/// `SocketTransport` following redirects of the opening handshake, over real sockets against `TestServer` scenarios
/// picked by path: a chain (relative and absolute `Location`s, to another port), each redirect status, a loop, too
/// many, redirects off, a downgrade, an upgrade to `wss`, a `Location` that cannot be followed, and the proxy decided
/// again for each hop.
@Suite(.timeLimit(.minutes(1))) struct SocketTransportRedirectTests {
    static let authority = TestCertificateAuthority()
    static let certificate = Self.authority.issue(hosts: ["127.0.0.1"])
    static let trusting = TLSOptions(additionalTrustRoots: [.pem(Data(Self.authority.certificate.certificatePEM))])

    func connect(
        _ url: String, headers: [(name: String, value: String)] = [], maximumRedirects: Int = 5,
        proxy: ProxyConfiguration = .none
    ) -> ClientProbe {
        let request = TransportRequest(
            url: URL(string: url)!, headers: headers, connectTimeout: .seconds(10), tls: Self.trusting, proxy: proxy,
            maximumRedirects: maximumRedirects)
        return ClientProbe(SocketTransport().connect(request))
    }

    /// A server redirecting each path of `routes` to its location with its status, and echoing on any other path.
    func server(_ routes: [String: (status: Int, location: String)], tls: Bool = false) throws -> TestServer {
        let configuration = TestServer.Configuration(tls: tls ? Self.certificate.serverTLS : nil)
        return try TestServer(configuration: configuration) { context in
            guard let route = routes[context.path] else { return .echo }
            return .redirect(status: route.status, to: route.location)
        }
    }

    @Test func aChainWithARelativeAndAnAbsoluteLocationOpensWithinOneAttempt() async throws {
        let final = try self.server([:])
        let first = try self.server([
            "/start": (302, "next/one?from=start"),  // relative to /start: /next/one
            "/next/one": (307, final.url(path: "/end?token=t")),
        ])
        var client = self.connect(
            first.url(path: "/start"), headers: [(name: "Authorization", value: "Bearer s3cret")])
        #expect(await client.next() == .redirected(302, first.url(path: "/next/one?from=start")))
        #expect(await client.next() == .redirected(307, final.url(path: "/end?token=t")))
        #expect(await client.next() == .opened(nil))
        try await client.connection.send(.text("after two hops"))
        #expect(await client.next() == .text("after two hops"))
        client.connection.close(code: 1000, reason: "")
        #expect(await client.rest() == [.ended(.closedLocally)])

        let hops = first.connections
        #expect(hops.map { $0.request?.target } == ["/start", "/next/one?from=start"])
        #expect(hops.map { $0.handshake } == [.redirected(status: 302), .redirected(status: 307)])
        // The first origin got the credentials on both hops; another port is another origin, which gets none.
        #expect(hops.map { $0.request?.header("Authorization") } == ["Bearer s3cret", "Bearer s3cret"])
        let end = try #require(final.connection(1)?.request)
        #expect(end.target == "/end?token=t" && end.header("Authorization") == nil)
        #expect(end.header("Host") == "127.0.0.1:\(final.port)")
        await first.stop()
        await final.stop()
    }

    @Test(arguments: [301, 302, 303, 307, 308])
    func eachRedirectStatusIsFollowed(status: Int) async throws {
        let server = try self.server(["/old": (status, "/new")])
        var client = self.connect(server.url(path: "/old"))
        #expect(await client.next() == .redirected(status, server.url(path: "/new")))
        #expect(await client.next() == .opened(nil))
        client.connection.close(code: 1000, reason: "")
        #expect(await client.rest() == [.ended(.closedLocally)])
        await server.stop()
    }

    @Test func aLoopIsRefusedWhenAURLComesAgainAndLeavesNoSocket() async throws {
        let server = try self.server(["/a": (302, "/b"), "/b": (301, "/a")])
        var client = self.connect(server.url(path: "/a"))
        #expect(await client.rest() == [
            .redirected(302, server.url(path: "/b")), .ended(.redirectFailed(.loop, status: 301)),
        ])
        #expect(server.acceptedConnectionCount == 2)
        #expect(SocketInventory.openClientConnections(port: server.port).isEmpty)
        await server.stop()
    }

    @Test func oneRedirectMoreThanTheLimitEndsTheAttemptAndZeroFollowsNone() async throws {
        let server = try self.server(["/0": (302, "/1"), "/1": (302, "/2"), "/2": (302, "/3")])
        var limited = self.connect(server.url(path: "/0"), maximumRedirects: 2)
        #expect(await limited.rest() == [
            .redirected(302, server.url(path: "/1")), .redirected(302, server.url(path: "/2")),
            .ended(.redirectFailed(.tooMany(limit: 2), status: 302)),
        ])
        #expect(server.acceptedConnectionCount == 3)

        var off = self.connect(server.url(path: "/0"), maximumRedirects: 0)
        #expect(await off.rest() == [.ended(.handshakeRejected(status: 302, retryAfter: nil))])
        #expect(server.acceptedConnectionCount == 4)
        await server.stop()
    }

    @Test func wssToWsIsRefusedBeforeAnythingIsSentThere() async throws {
        let plain = try self.server([:])
        let secure = try self.server(["/feed": (302, plain.url(path: "/feed"))], tls: true)
        var client = self.connect(secure.url(path: "/feed"))
        #expect(await client.rest() == [.ended(.redirectFailed(.downgrade, status: 302))])
        #expect(plain.acceptedConnectionCount == 0)
        await plain.stop()
        await secure.stop()
    }

    @Test func wsToWssIsFollowedAndTheNextServerIsVerified() async throws {
        let secure = try self.server([:], tls: true)
        // `https` is read as `wss`, as the WHATWG WebSocket API reads it.
        let location = secure.url(path: "/feed").replacingOccurrences(of: "wss://", with: "https://")
        let plain = try self.server(["/feed": (308, location)])
        var client = self.connect(plain.url(path: "/feed"))
        #expect(await client.next() == .redirected(308, secure.url(path: "/feed")))
        #expect(await client.next() == .opened(nil))
        client.connection.close(code: 1000, reason: "")
        #expect(await client.rest() == [.ended(.closedLocally)])

        // A server whose certificate names another host fails the hop as it would the first URL.
        let wrong = try TestServer(configuration: .init(tls: Self.authority.issue(hosts: ["wrong.example"]).serverTLS))
        let toWrong = try self.server(["/feed": (302, wrong.url(path: "/feed"))])
        var refused = self.connect(toWrong.url(path: "/feed"))
        #expect(await refused.next() == .redirected(302, wrong.url(path: "/feed")))
        #expect(await refused.next() == .ended(.tlsFailed(detail: "hostname mismatch", permanent: true)))
        for server in [secure, plain, wrong, toWrong] { await server.stop() }
    }

    @Test func aLocationThatCannotBeFollowedSaysWhy() async throws {
        let server = try self.server(["/ftp": (302, "ftp://127.0.0.1/file"), "/port": (307, "ws://127.0.0.1:70000/")])
        var ftp = self.connect(server.url(path: "/ftp"))
        let scheme = RedirectFailure.invalidLocation("scheme not ws, wss, http or https")
        #expect(await ftp.rest() == [.ended(.redirectFailed(scheme, status: 302))])
        var port = self.connect(server.url(path: "/port"))
        #expect(await port.rest() == [.ended(.redirectFailed(.invalidLocation("port out of range"), status: 307))])
        await server.stop()
    }

    @Test func manyConnectionsFollowTheSameChainAtOnce() async throws {
        let secure = try self.server([:], tls: true)
        let plain = try self.server(["/a": (302, "/b"), "/b": (307, secure.url(path: "/c"))])
        let transport = SocketTransport()  // one transport: its TLS contexts are shared by every hop of every connection
        let opened = await withTaskGroup(of: [Seen].self) { group in
            for _ in 0..<10 {
                group.addTask {
                    let request = TransportRequest(
                        url: URL(string: plain.url(path: "/a"))!, connectTimeout: .seconds(10), tls: Self.trusting)
                    var client = ClientProbe(transport.connect(request))
                    var seen: [Seen] = []
                    for _ in 0..<3 { seen.append(await client.next() ?? .ended(.closedLocally)) }
                    client.connection.close(code: 1000, reason: "")
                    _ = await client.rest()
                    return seen
                }
            }
            return await group.reduce(into: [[Seen]]()) { $0.append($1) }
        }
        let expected: [Seen] = [
            .redirected(302, plain.url(path: "/b")), .redirected(307, secure.url(path: "/c")), .opened(nil),
        ]
        #expect(opened.count == 10 && opened.allSatisfy { $0 == expected })
        #expect(plain.acceptedConnectionCount == 20 && secure.acceptedConnectionCount == 10)
        await plain.stop()
        await secure.stop()
    }

    @Test func closingBetweenTwoHopsEndsAtOnceAndLeavesNoSocket() async throws {
        let silent = try TestServer(scenario: .silentHandshake)  // the next hop never answers its upgrade
        let first = try self.server(["/a": (302, silent.url(path: "/b"))])
        var client = self.connect(first.url(path: "/a"))
        #expect(await client.next() == .redirected(302, silent.url(path: "/b")))
        _ = try await silent.waitForConnection(1) { $0.request != nil }  // the next hop's request is in
        client.connection.close(code: 1000, reason: "")
        #expect(await client.rest() == [.ended(.closedLocally)])
        #expect(SocketInventory.openClientConnections(port: silent.port).isEmpty)
        #expect(SocketInventory.openClientConnections(port: first.port).isEmpty)
        await first.stop()
        await silent.stop()
    }

    /// The first URL is direct (`no_proxy` names it), the next goes through the proxy `http_proxy` names: a scripted
    /// one, which sees the `CONNECT` for the new host (a name the client never resolves) and then plays the origin.
    @Test func eachHopTakesTheProxyTheConfigurationNamesForItsHost() async throws {
        var proxy = try ScriptedPeer()
        let server = try self.server(["/start": (302, "ws://origin.invalid:9/through?x=1")])
        let variables = ["http_proxy": "http://127.0.0.1:\(proxy.port)", "no_proxy": "127.0.0.1"]
        var client = self.connect(server.url(path: "/start"), proxy: .variables(variables))
        #expect(await client.next() == .redirected(302, "ws://origin.invalid:9/through?x=1"))
        let tunnel = await proxy.accept()
        #expect(await tunnel.readHead() == "CONNECT origin.invalid:9 HTTP/1.1\r\nHost: origin.invalid:9\r\n\r\n")
        try await tunnel.write(Array("HTTP/1.1 200 Connection established\r\n\r\n".utf8))
        let request = try await tunnel.open()
        #expect(request.target == "/through?x=1" && request.header("Host") == "origin.invalid:9")
        #expect(await client.next() == .opened(nil))
        tunnel.reset()
        #expect(await client.rest() == [.ended(.receiveFailed)])
        #expect(server.connection(1)?.request?.target == "/start")  // the first hop went there directly
        await proxy.stop()
        await server.stop()
    }
}
#endif
