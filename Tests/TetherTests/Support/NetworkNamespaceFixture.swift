#if os(Linux)
import Foundation
import Synchronization
import Testing
@testable import Tether

/// Two network namespaces joined by a veth pair, made with iproute2's `ip` for one test and removed after it:
/// `watched` holds `va` (192.0.2.1/24, 2001:db8::1/64 when asked), `peer` holds `vb` (192.0.2.2/24). Traffic
/// never leaves these namespaces: the default route points at `vb`. Shared by the netlink monitor's tests (the
/// monitor watches `watched`) and the client's real-link tests (client in `watched`, test server in `peer`).
final class NetworkNamespaceFixture {
    /// `ip` from Debian's iproute2, when installed.
    static let ipExecutable: String? = ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }

    /// `tc` from the same package, for the blackhole.
    static let tcExecutable: String = ["/usr/sbin/tc", "/sbin/tc", "/usr/bin/tc", "/bin/tc"]
        .first { FileManager.default.isExecutableFile(atPath: $0) } ?? "tc"

    /// Real-link tests need root (namespaces, veth) and `ip`.
    static let isAvailable = getuid() == 0 && ipExecutable != nil
    static let unavailableReason: Comment =
        "needs root and iproute2's `ip` (Debian package iproute2) to create network namespaces and veth pairs"

    private static let counter = Atomic<Int>(0)

    let watched: String
    let peer: String
    /// The namespace file a `NetlinkPathMonitor` enters.
    var watchedPath: String { "/var/run/netns/\(self.watched)" }
    /// The namespace file of the peer side (where a test server listens).
    var peerPath: String { "/var/run/netns/\(self.peer)" }

    /// Creates both namespaces (nothing else). Unique per process and per fixture.
    init() throws {
        let number = Self.counter.add(1, ordering: .relaxed).newValue
        let tag = "tether-path-\(getpid())-\(number)"
        self.watched = "\(tag)-w"
        self.peer = "\(tag)-p"
        try self.ip("netns", "add", self.watched)
        do {
            try self.ip("netns", "add", self.peer)
        } catch {
            self.remove()
            throw error
        }
    }

    /// Adds the veth pair with IPv4 addresses, brings both ends up and adds the IPv4 default route via `vb`.
    func connect() throws {
        try self.ip("-n", self.watched, "link", "add", "va", "type", "veth", "peer", "name", "vb", "netns", self.peer)
        try self.ip("-n", self.watched, "addr", "add", "192.0.2.1/24", "dev", "va")
        try self.ip("-n", self.peer, "addr", "add", "192.0.2.2/24", "dev", "vb")
        try self.ip("-n", self.peer, "link", "set", "vb", "up")
        try self.ip("-n", self.watched, "link", "set", "va", "up")
        try self.ip("-n", self.watched, "route", "add", "default", "via", "192.0.2.2", "dev", "va")
    }

    /// Adds a second veth pair, `vc` (198.51.100.1/24, watched) and `vd` (198.51.100.2/24, peer), both up, with no
    /// route through it: a second wired interface the default route can move to.
    func connectSecondLink() throws {
        try self.ip("-n", self.watched, "link", "add", "vc", "type", "veth", "peer", "name", "vd", "netns", self.peer)
        try self.ip("-n", self.watched, "addr", "add", "198.51.100.1/24", "dev", "vc")
        try self.ip("-n", self.peer, "addr", "add", "198.51.100.2/24", "dev", "vd")
        try self.ip("-n", self.peer, "link", "set", "vd", "up")
        try self.ip("-n", self.watched, "link", "set", "vc", "up")
    }

    /// The address of a server reachable over either link: `203.0.113.10/32` on the peer's loopback interface, so
    /// that the watched namespace reaches it by its default route (not by a link's own subnet), wherever that points.
    static let serverBehindBothLinks = "203.0.113.10"

    /// Puts `serverBehindBothLinks` on the peer's `lo` (and brings it up). Call after `connect()`.
    func addServerBehindBothLinks() throws {
        try self.ip("-n", self.peer, "addr", "add", "\(Self.serverBehindBothLinks)/32", "dev", "lo")
        try self.ip("-n", self.peer, "link", "set", "lo", "up")
    }

    /// Drops every packet `va` and `vb` send (a `pfifo` queue of length 0 on each; this kernel has no `netem`),
    /// so the link stays up while nothing crosses it. `unblackhole()` removes the queues.
    func blackhole() throws {
        let tc = Self.tcExecutable
        try self.ip("netns", "exec", self.watched, tc, "qdisc", "replace", "dev", "va", "root", "pfifo", "limit", "0")
        try self.ip("netns", "exec", self.peer, tc, "qdisc", "replace", "dev", "vb", "root", "pfifo", "limit", "0")
    }

    func unblackhole() throws {
        try self.ip("netns", "exec", self.watched, Self.tcExecutable, "qdisc", "del", "dev", "va", "root")
        try self.ip("netns", "exec", self.peer, Self.tcExecutable, "qdisc", "del", "dev", "vb", "root")
    }

    /// Runs `ip` in the watched namespace (`ip -n WATCHED ...`) and returns when it has exited.
    @discardableResult
    func inWatched(_ arguments: String...) throws -> ContinuousClock.Instant {
        try self.ip(["-n", self.watched] + arguments)
    }

    /// Runs `ip` in the peer namespace.
    @discardableResult
    func inPeer(_ arguments: String...) throws -> ContinuousClock.Instant {
        try self.ip(["-n", self.peer] + arguments)
    }

    /// Runs many `ip` commands in the watched namespace in one process (`ip -n WATCHED -batch FILE`), so that
    /// their notifications arrive as one burst.
    func batchInWatched(_ commands: [String]) throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("\(self.watched).batch")
        try commands.joined(separator: "\n").write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        try self.ip("-n", self.watched, "-batch", file.path)
    }

    /// Deletes both namespaces, which deletes the veth pair with them. Safe to call twice.
    func remove() {
        _ = try? self.ip("netns", "delete", self.watched)
        _ = try? self.ip("netns", "delete", self.peer)
    }

    struct CommandFailed: Error, CustomStringConvertible {
        var command: String
        var status: Int32
        var output: String
        var description: String { "`\(self.command)` exited with \(self.status): \(self.output)" }
    }

    @discardableResult
    private func ip(_ arguments: String...) throws -> ContinuousClock.Instant {
        try self.ip(arguments)
    }

    /// Runs `ip` with the arguments; returns the instant it was seen to exit.
    private func ip(_ arguments: [String]) throws -> ContinuousClock.Instant {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.ipExecutable ?? "ip")
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let finished = ContinuousClock.now
        guard process.terminationStatus == 0 else {
            throw CommandFailed(
                command: "ip " + arguments.joined(separator: " "),
                status: process.terminationStatus,
                output: text
            )
        }
        return finished
    }
}

/// Receives a monitor's snapshots and hands them out in order, with their arrival time.
final class SnapshotRecorder: Sendable {
    struct Arrival: Sendable {
        var snapshot: PathSnapshot
        var instant: ContinuousClock.Instant
    }

    private struct State {
        var arrived: [Arrival] = []
        var waiter: (id: Int, continuation: CheckedContinuation<Arrival?, Never>)?
        var nextWaiterID = 0
    }

    private let state = Mutex(State())

    func record(_ snapshot: PathSnapshot) {
        let arrival = Arrival(snapshot: snapshot, instant: .now)
        let waiter = self.state.withLock { state -> CheckedContinuation<Arrival?, Never>? in
            guard let waiter = state.waiter else {
                state.arrived.append(arrival)
                return nil
            }
            state.waiter = nil
            return waiter.continuation
        }
        waiter?.resume(returning: arrival)
    }

    /// Snapshots that arrived and were not taken yet.
    var unclaimed: [PathSnapshot] { self.state.withLock { $0.arrived.map(\.snapshot) } }

    /// The next snapshot, or `nil` when none arrives within `deadline` (a limit for a failing test, not a wait
    /// that the test relies on).
    func next(within deadline: Duration = .seconds(3)) async -> Arrival? {
        await withCheckedContinuation { continuation in
            let waiterID = self.state.withLock { state -> Int? in
                if !state.arrived.isEmpty { return nil }
                state.nextWaiterID += 1
                state.waiter = (state.nextWaiterID, continuation)
                return state.nextWaiterID
            }
            guard let waiterID else {
                let arrival = self.state.withLock { $0.arrived.removeFirst() }
                continuation.resume(returning: arrival)
                return
            }
            Task {
                try? await Task.sleep(for: deadline)
                let expired = self.state.withLock { state -> CheckedContinuation<Arrival?, Never>? in
                    guard let waiter = state.waiter, waiter.id == waiterID else { return nil }
                    state.waiter = nil
                    return waiter.continuation
                }
                expired?.resume(returning: nil)
            }
        }
    }
}
#endif
