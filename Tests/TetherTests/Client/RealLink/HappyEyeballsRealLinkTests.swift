#if os(Linux)
import Foundation
import Testing
import TetherCore
import TetherPOSIX
import TetherTestServer
@testable import Tether
import TetherTesting

/// Happy Eyeballs over a real link: a name that the watched namespace's own hosts file (`/etc/netns/NAME/hosts`,
/// what `ip netns exec` shows as `/etc/hosts`) gives an IPv6 address first, whose packets vanish, and a working
/// IPv4 address. The IPv6 SYNs go to a link-layer address nobody has (a permanent neighbour entry), so the peer's
/// interface drops them without an answer: no reset, no ICMP, just silence, as on a network whose IPv6 is broken.
@Suite(.serialized) struct HappyEyeballsRealLinkTests {
    static let needsRoot = ConditionTrait.enabled(
        if: NetworkNamespaceFixture.isAvailable,
        NetworkNamespaceFixture.unavailableReason
    )
    static let name = "dual.tether.test"

    /// The fixture with IPv4 working, IPv6 silent, and the hosts file naming both (IPv6 first).
    static func makeDualStackFixture() throws -> (NetworkNamespaceFixture, hostsDirectory: URL) {
        let fixture = try NetworkNamespaceFixture()
        let directory = URL(fileURLWithPath: "/etc/netns/\(fixture.watched)")
        do {
            try fixture.connect()
            try fixture.inWatched("-6", "addr", "add", "2001:db8::1/64", "dev", "va", "nodad")
            try fixture.inWatched(
                "-6", "neigh", "add", "2001:db8::2", "lladdr", "02:00:00:00:de:ad", "dev", "va", "nud", "permanent")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let hosts = "2001:db8::2 \(Self.name)\n192.0.2.2 \(Self.name)\n"
            try hosts.write(to: directory.appendingPathComponent("hosts"), atomically: true, encoding: .utf8)
        } catch {
            try? FileManager.default.removeItem(at: directory)
            fixture.remove()
            throw error
        }
        return (fixture, directory)
    }

    /// Measures a time (open within a second), which the parallel suite on two cores stretched to 2.5 s once: it runs
    /// alone, `TETHER_TIMING_TESTS=1 swift test --filter HappyEyeballsRealLinkTests`, as `.ci/run` does.
    @Test(needsRoot, .enabled(if: ProcessInfo.processInfo.environment["TETHER_TIMING_TESTS"] == "1",
                              "runs alone: set TETHER_TIMING_TESTS=1"))
    func aDualStackNameWhoseIPv6IsSilentOpensOverIPv4OnTheFirstAttemptWithinASecond() async throws {
        let (fixture, hostsDirectory) = try Self.makeDualStackFixture()
        defer {
            try? FileManager.default.removeItem(at: hostsDirectory)
            fixture.remove()
        }
        var serverConfiguration = TestServer.Configuration(host: "192.0.2.2")
        serverConfiguration.namespace = NetworkNamespace(path: fixture.peerPath)
        let server = try TestServer(configuration: serverConfiguration, scenario: .normal)
        let port = try #require(URL(string: server.url(path: "/"))?.port)
        let client = try WebSocketClient(
            configuration: WebSocketClient.Configuration(
                url: URL(string: "ws://\(Self.name):\(port)/feed")!,
                connectTimeout: .seconds(10),  // the default: a client without racing spends all of it on IPv6
                transport: SocketTransport(namespace: fixture.watchedPath)
            ))
        let probe = EventRecorder(client.events)
        await ResponsiveScheduler.wait()
        await client.start()
        let opened = await probe.wait(timeout: .seconds(20)) { history in
            history.records.contains { $0.kind == .opened || $0.kind == .closed }
        }
        let records = opened?.records ?? probe.records
        let log = records.map(\.logLine).joined(separator: "\n")
        let connecting = try #require(records.first { $0.kind == .connecting }, "records:\n\(log)")
        let open = try #require(records.first { $0.kind == .opened }, "never opened; records:\n\(log)")
        let latency = open.time - connecting.time
        print("happy eyeballs: opened over IPv4 \(latency) ms after the first attempt started")
        #expect(open.generation == 1 && connecting.attempt == 0, "records:\n\(log)")
        #expect(latency < 1_000, "opened \(latency) ms after the attempt started")
        #expect(!records.contains { $0.kind == .closed })
        #expect(server.connections.count == 1)  // the server listens on IPv4 only

        if let reference = try Self.curlConnectTime(namespace: fixture.watched, port: port) {
            print("happy eyeballs: curl connected in the same namespace in \(reference)")
        }
        await client.stop()
        await server.stop()
    }

    /// `curl`'s time to connect to the name from inside the watched namespace (`ip netns exec`, which shows the
    /// namespace's hosts file as `/etc/hosts`), the reference; nil with a message when curl is not installed.
    static func curlConnectTime(namespace: String, port: Int) throws -> String? {
        guard let curl = ["/usr/bin/curl", "/bin/curl"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }),
            let ip = NetworkNamespaceFixture.ipExecutable
        else {
            print("happy eyeballs: curl is not installed (Debian package curl); no reference measured")
            return nil
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ip)
        process.arguments = [
            "netns", "exec", namespace, curl, "--silent", "--output", "/dev/null", "--max-time", "5",
            "--write-out", "%{time_connect} s to %{remote_ip}", "http://\(Self.name):\(port)/",
        ]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return text
    }
}
#endif
