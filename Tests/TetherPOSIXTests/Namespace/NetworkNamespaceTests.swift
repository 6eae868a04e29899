#if os(Linux)
import Glibc
import Testing
@testable import TetherPOSIX
import TetherTestSupport

/// iproute2's `ip`, if installed.
private let ipCandidates: [String] = ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"]
private let ipPath = ipCandidates.first { access($0, X_OK) == 0 }

/// These tests create real network namespaces, which needs root and iproute2's `ip`.
private let namespacesAvailable = getuid() == 0 && ipPath != nil

/// A namespace made with `ip netns add`, with `lo` up, deleted by `delete()`.
private struct TemporaryNamespace {
    let name: String
    let namespace: NetworkNamespace

    init(suffix: String) throws {
        self.name = "tether-test-\(getpid())-\(suffix)"
        self.namespace = NetworkNamespace(named: self.name)
        try Self.ip(["netns", "add", self.name])
        do {
            try Self.ip(["-n", self.name, "link", "set", "lo", "up"])
        } catch {
            self.delete()
            throw error
        }
    }

    func delete() {
        try? Self.ip(["netns", "delete", self.name])
    }

    struct CommandFailed: Error, CustomStringConvertible {
        let arguments: [String]
        let status: Int32
        var description: String { "ip \(self.arguments.joined(separator: " ")) exited with \(self.status)" }
    }

    /// Runs `ip` with `posix_spawn` and waits for it. (Not Foundation's `Process`: in this
    /// toolchain, running it while other tests use sockets made descriptors of unrelated sockets
    /// receive other data — it appears to close descriptors it does not own.)
    static func ip(_ arguments: [String]) throws {
        let argv = (["ip"] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, ipPath!, nil, nil, argv, environ)
        guard spawned == 0 else { throw CommandFailed(arguments: arguments, status: spawned) }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        // WIFEXITED && WEXITSTATUS == 0 is simply status == 0.
        guard status == 0 else { throw CommandFailed(arguments: arguments, status: status) }
    }
}

@Suite(
    .enabled(if: namespacesAvailable, "needs root and iproute2's ip to create network namespaces"),
    .timeLimit(.minutes(1))
)
struct NetworkNamespaceTests {
    @Test func clientAndServerTalkInsideANamespaceThatTheHostCannotReach() async throws {
        let temporary = try TemporaryNamespace(suffix: "echo")
        defer { temporary.delete() }
        let loop = try EventLoop(name: "test-netns")
        defer { loop.shutdown() }
        // The namespace's server takes a port number that the host holds without listening, so that no
        // parallel test's listener on the host can answer the host-side connect below.
        let hostPort = try ReservedPort()
        let listener = try TCPListener.bind(port: hostPort.port, loop: loop, namespace: temporary.namespace)
        listener.start { connection in connection.setHandler(EchoHandler()) }
        let client = try await TCPConnection.connect(
            to: [listener.address], timeout: .seconds(5), loop: loop, namespace: temporary.namespace
        )
        var probe = try await ConnectionProbe(client)
        try await client.send([1, 2, 3])
        #expect(await probe.read(count: 3) == [1, 2, 3])
        // The same address from the host's namespace is another machine's loopback: nobody listens.
        await #expect(throws: SocketError.refused) {
            try await connect(to: [listener.address], loop: loop)
        }
        client.close()
        await listener.close()
    }

    @Test func addressWithoutARouteInTheNamespaceIsUnreachable() async throws {
        let temporary = try TemporaryNamespace(suffix: "noroute")
        defer { temporary.delete() }
        let loop = try EventLoop(name: "test-noroute")
        defer { loop.shutdown() }
        // Only `lo` exists in the namespace, so nothing leaves it: TEST-NET-1 has no route.
        await #expect(throws: SocketError.unreachable) {
            try await TCPConnection.connect(
                to: [SocketAddress(ip: "192.0.2.1", port: 80)!], timeout: .seconds(5), loop: loop,
                namespace: temporary.namespace
            )
        }
        #expect(try await loop.submit { loop.ownedDescriptorCount } == 2)
    }

    @Test func runJoinsTheNamespaceOnlyOnItsOwnThread() throws {
        let temporary = try TemporaryNamespace(suffix: "thread")
        defer { temporary.delete() }
        func currentNamespace() -> String {
            var target = [CChar](repeating: 0, count: 128)
            let length = readlink("/proc/thread-self/ns/net", &target, target.count - 1)
            return String(decoding: target[..<max(length, 0)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        let outside = currentNamespace()
        let inside = try temporary.namespace.run { currentNamespace() }
        #expect(!inside.isEmpty && inside != outside)
        #expect(currentNamespace() == outside)
    }

    @Test func missingNamespaceFailsWithATypedError() {
        let missing = NetworkNamespace(named: "tether-test-\(getpid())-missing")
        #expect(throws: SocketError.system(operation: "open \(missing.path)", errno: ENOENT)) {
            try missing.run { 1 }
        }
    }
}
#endif
