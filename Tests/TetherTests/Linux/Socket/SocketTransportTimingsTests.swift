#if os(Linux)
import Foundation
import Glibc
import Testing
import TetherCore
import TetherPOSIX
import TetherTestServer
import TetherTestSupport
@testable import Tether
import TetherTesting

/// The steps of a real attempt as `SocketTransport` times them (`TransportConnection.attemptTimings()`): over
/// loopback, TLS full then resumed, through the repository's test proxy, refused, stalled against a blackhole, and
/// raced across two address families.
@Suite(.timeLimit(.minutes(1))) struct SocketTransportTimingsTests {
    static let authority = TestCertificateAuthority()
    static let trusting = TLSOptions(additionalTrustRoots: [.pem(Data(Self.authority.certificate.certificatePEM))])

    /// The steps reached, in the order they happen.
    static func steps(_ timings: AttemptTimings) -> [AttemptTimings.Step] {
        ([timings.resolve] + timings.tcp.map { AttemptTimings.Step(start: $0.start, duration: $0.duration) }
            + [timings.proxy, timings.tls, timings.upgrade]).compactMap { $0 }
    }

    /// Each step starts no earlier than the one before it ended.
    static func inOrder(_ timings: AttemptTimings) -> Bool {
        let steps = Self.steps(timings)
        return zip(steps, steps.dropFirst()).allSatisfy { $0.end <= $1.start }
    }

    @Test func aLoopbackOpenTimesTheResolveTheConnectAndTheUpgradeInOrder() async throws {
        let server = try TestServer(scenario: .normal)
        let port = try #require(URL(string: server.url())?.port)
        var client = ClientProbe(url: URL(string: server.url(path: "/timed"))!)
        #expect(await client.next() == .opened(nil))
        let timings = try #require(client.connection.attemptTimings())
        #expect(timings.resolve?.finished == true)
        #expect(timings.tcp == [.init(
            address: "127.0.0.1:\(port)", start: timings.tcp.first?.start ?? -1,
            duration: timings.tcp.first?.duration ?? -1, outcome: .connected)])
        #expect(timings.proxy == nil && timings.tls == nil && timings.tlsHandshake == nil && timings.greeting == nil)
        #expect(timings.upgrade?.finished == true)
        #expect(Self.inOrder(timings), "\(timings)")
        client.connection.close(code: 1000, reason: "")
        _ = await client.rest()
        #expect(client.connection.attemptTimings() == timings)  // final from the open on
        await server.stop()
    }

    @Test func wssTimesAFullHandshakeThenAResumedOneOnTheSecondConnection() async throws {
        let server = try TestServer(configuration: .init(tls: Self.authority.issue().serverTLS), scenario: .normal)
        var options = Self.trusting
        options.pins = [Self.authority.certificate.pin]  // a context (and session cache) of this test's own
        let transport = SocketTransport()
        var handshakes: [AttemptTimings.TLSHandshake?] = []
        for _ in 1...2 {
            var client = ClientProbe(transport.connect(
                TransportRequest(url: URL(string: server.url())!, connectTimeout: .seconds(5), tls: options)))
            #expect(await client.next() == .opened(nil))
            let timings = try #require(client.connection.attemptTimings())
            #expect(timings.tls?.finished == true && timings.upgrade?.finished == true)
            #expect(Self.inOrder(timings), "\(timings)")
            handshakes.append(timings.tlsHandshake)
            client.connection.close(code: 1000, reason: "")
            _ = await client.rest()
        }
        #expect(handshakes == [.full, .resumed])
        await server.stop()
    }

    @Test(.enabled(if: TinyProxy.executable != nil, Comment(rawValue: TinyProxy.missing)))
    func throughTheTestProxyTheTunnelIsTimedBetweenTheConnectAndTLS() async throws {
        let proxy = try await TinyProxy()
        defer { proxy.stop() }
        let server = try TestServer(configuration: .init(tls: Self.authority.issue().serverTLS), scenario: .echo)
        let request = TransportRequest(
            url: URL(string: server.url())!, connectTimeout: .seconds(5), tls: Self.trusting,
            proxy: .http(HTTPProxy(host: "127.0.0.1", port: proxy.port)))
        var client = ClientProbe(SocketTransport().connect(request))
        #expect(await client.next() == .opened(nil))
        let timings = try #require(client.connection.attemptTimings())
        #expect(timings.tcp.map(\.address) == ["127.0.0.1:\(proxy.port)"])  // the proxy's address, not the origin's
        #expect(timings.proxy?.finished == true && timings.tls?.finished == true && timings.upgrade != nil)
        #expect(Self.inOrder(timings), "\(timings)")
        client.connection.close(code: 1000, reason: "")
        _ = await client.rest()
        await server.stop()
    }

    @Test func aRefusedPortEndsWithTheResolveAndTheRefusedConnectOnly() async throws {
        let reserved = try ReservedPort()
        var client = ClientProbe(url: URL(string: "ws://127.0.0.1:\(reserved.port)/")!)
        guard case .ended(.connectFailed(.refused, _))? = await client.next() else {
            Issue.record("not refused")
            return
        }
        let timings = try #require(client.connection.attemptTimings())
        #expect(timings.resolve?.finished == true)
        #expect(timings.tcp.map(\.outcome) == [.failed(.refused)])
        #expect(timings.proxy == nil && timings.tls == nil && timings.upgrade == nil)
    }

    /// A listener whose accept queue is full drops every further SYN, without an answer: a blackhole on loopback.
    @Test func aConnectTimeoutAgainstABlackholeShowsTheConnectThatNeverEnded() async throws {
        let (listener, port) = try BlockingLoopbackListener.open()
        defer { close(listener) }
        let fillers = try (0..<2).map { _ in try Self.connectBlocking(port: port) }  // backlog 1: two fill it
        defer { fillers.forEach { close($0) } }
        var client = ClientProbe(url: URL(string: "ws://127.0.0.1:\(port)/")!, connectTimeout: 300)
        #expect(await client.rest() == [.ended(.connectFailed(.timedOut))])
        let timings = try #require(client.connection.attemptTimings())
        #expect(timings.resolve?.finished == true)
        let connect = try #require(timings.tcp.first)
        #expect(timings.tcp.count == 1 && connect.outcome != .connected, "\(timings)")
        #expect(connect.start + connect.duration >= 250, "\(timings)")  // it ran until the deadline
        #expect(timings.upgrade == nil)
    }

    /// A name whose first address (IPv6 loopback) refuses: the race goes on to IPv4 at once, and both connects are
    /// timed, each with its address and family.
    @Test func aRaceWhoseFirstFamilyFailsShowsBothConnects() async throws {
        let server = try TestServer(scenario: .normal)  // 127.0.0.1 only
        let port = try #require(URL(string: server.url())?.port)
        let hosts = FileManager.default.temporaryDirectory
            .appendingPathComponent("tether-timings-hosts-\(getpid())-\(port)")
        try "::1 dual.timings.test\n127.0.0.1 dual.timings.test\n".write(to: hosts, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: hosts) }
        var dialer = SocketDialer.direct
        dialer.hostsFile = hosts.path
        let request = TransportRequest(url: URL(string: "ws://dual.timings.test:\(port)/")!, connectTimeout: .seconds(5))
        var client = ClientProbe(SocketConnection(request: request, loop: .shared, dialer: dialer))
        #expect(await client.next() == .opened(nil))
        let timings = try #require(client.connection.attemptTimings())
        #expect(timings.tcp.map(\.address) == ["[::1]:\(port)", "127.0.0.1:\(port)"], "\(timings)")
        #expect(timings.tcp.map(\.family) == ["ipv6", "ipv4"])
        #expect(timings.tcp.map(\.outcome) == [.failed(.refused), .connected])
        #expect(Self.inOrder(timings), "\(timings)")
        client.connection.close(code: 1000, reason: "")
        _ = await client.rest()
        await server.stop()
    }

    /// A blocking connect to 127.0.0.1:`port`; the descriptor, which the caller closes.
    static func connectBlocking(port: Int) throws -> Int32 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        address.sin_port = UInt16(port).bigEndian
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard descriptor >= 0, connected else {
            close(descriptor)
            throw SocketError(operation: "connect", errno: errno)
        }
        return descriptor
    }
}
#endif
