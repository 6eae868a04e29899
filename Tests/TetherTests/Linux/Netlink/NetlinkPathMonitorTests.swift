#if os(Linux)
import Foundation
import Testing
@testable import Tether
import TetherTestSupport

/// Real links: each test makes its own namespaces and veth pair (`NetworkNamespaceFixture`) and watches one
/// namespace with a `NetlinkPathMonitor`. Serialized so that latency is measured on a quiet machine.
@Suite(.serialized) struct NetlinkPathMonitorTests {
    static let wired = PathSnapshot(status: .satisfied, interfaces: [.wiredEthernet], interfaceNames: ["va"])
    static let unsatisfied = PathSnapshot(status: .unsatisfied)
    static let needsRoot = ConditionTrait.enabled(
        if: NetworkNamespaceFixture.isAvailable,
        NetworkNamespaceFixture.unavailableReason
    )

    /// Starts a monitor of the fixture's watched namespace that records into a new recorder.
    func watch(_ fixture: NetworkNamespaceFixture) throws -> (NetlinkPathMonitor, SnapshotRecorder) {
        let monitor = try NetlinkPathMonitor(namespace: fixture.watchedPath)
        let recorder = SnapshotRecorder()
        monitor.start(recorder.record)
        return (monitor, recorder)
    }

    @Test func missingNamespaceThrowsNamespaceUnavailable() {
        let path = "/var/run/netns/tether-path-missing-\(getpid())"
        #expect(throws: NetlinkPathMonitorError.namespaceUnavailable(path: path, errno: ENOENT)) {
            try NetlinkPathMonitor(namespace: path)
        }
    }

    @Test(needsRoot) func emptyNamespaceIsUnsatisfiedUntilALinkWithAddressAndDefaultRouteComesUp() async throws {
        let fixture = try NetworkNamespaceFixture()
        defer { fixture.remove() }
        let (monitor, recorder) = try self.watch(fixture)
        defer { monitor.cancel() }
        #expect(await recorder.next()?.snapshot == Self.unsatisfied)

        try fixture.inWatched("link", "add", "va", "type", "veth", "peer", "name", "vb", "netns", fixture.peer)
        try fixture.inWatched("addr", "add", "192.0.2.1/24", "dev", "va")
        try fixture.inPeer("addr", "add", "192.0.2.2/24", "dev", "vb")
        try fixture.inPeer("link", "set", "vb", "up")
        try fixture.inWatched("link", "set", "va", "up")
        let routeAdded = try fixture.inWatched("route", "add", "default", "via", "192.0.2.2", "dev", "va")
        let satisfied = try #require(await recorder.next())
        #expect(satisfied.snapshot == Self.wired)
        // The carrier can come up after the route (the kernel's link watch batches carrier changes).
        let latency = max(satisfied.instant - routeAdded, .zero)
        #expect(latency < TestTime.scaled(.seconds(2)), "satisfied \(latency) after the default route was added")
        #expect(monitor.failure == nil)
    }

    @Test(needsRoot) func linkDownIsUnsatisfiedWithin100MillisecondsAndUpWithRouteIsSatisfiedAgain() async throws {
        let fixture = try NetworkNamespaceFixture()
        defer { fixture.remove() }
        try fixture.connect()
        let (monitor, recorder) = try self.watch(fixture)
        defer { monitor.cancel() }
        #expect(await recorder.next()?.snapshot == Self.wired)

        let linkDown = try fixture.inWatched("link", "set", "va", "down")
        let unsatisfied = try #require(await recorder.next())
        #expect(unsatisfied.snapshot == Self.unsatisfied)
        let latency = unsatisfied.instant - linkDown
        #expect(
            latency < TestTime.scaled(.milliseconds(100)), "unsatisfied \(latency) after `ip link set va down` exited")

        // Taking the link down flushed the IPv4 default route: up alone changes nothing visible.
        try fixture.inWatched("link", "set", "va", "up")
        let routeAdding = ContinuousClock.now
        try fixture.inWatched("route", "add", "default", "via", "192.0.2.2", "dev", "va")
        let satisfied = try #require(await recorder.next())
        #expect(satisfied.snapshot == Self.wired)
        #expect(satisfied.instant > routeAdding, "satisfied before the default route was added back")
    }

    @Test(needsRoot) func changesThatLeaveThePathAsItWasDeliverNothing() async throws {
        let fixture = try NetworkNamespaceFixture()
        defer { fixture.remove() }
        try fixture.connect()
        let (monitor, recorder) = try self.watch(fixture)
        defer { monitor.cancel() }
        #expect(await recorder.next()?.snapshot == Self.wired)

        // The same default route announced again, and changes to things the path does not show.
        try fixture.inWatched("route", "replace", "default", "via", "192.0.2.2", "dev", "va")
        try fixture.inWatched("route", "replace", "default", "via", "192.0.2.2", "dev", "va")
        try fixture.inWatched("addr", "add", "192.0.2.10/24", "dev", "va")
        try fixture.inWatched("route", "add", "198.51.100.0/24", "via", "192.0.2.2", "dev", "va")
        try fixture.inWatched("link", "set", "va", "mtu", "1400")
        try fixture.inWatched("link", "set", "lo", "up")
        // A visible change: the next snapshot must be this one, with nothing before it.
        try fixture.inWatched("link", "set", "va", "down")
        #expect(await recorder.next()?.snapshot == Self.unsatisfied)
        try fixture.inWatched("link", "set", "va", "down")
        try fixture.inWatched("link", "set", "va", "up")
        try fixture.inWatched("route", "add", "default", "via", "192.0.2.2", "dev", "va")
        #expect(await recorder.next()?.snapshot == Self.wired)
        #expect(recorder.unclaimed.isEmpty)
    }

    @Test(needsRoot) func peerDownLosesCarrierAndPeerUpRestoresThePathWithItsRoute() async throws {
        let fixture = try NetworkNamespaceFixture()
        defer { fixture.remove() }
        try fixture.connect()
        let (monitor, recorder) = try self.watch(fixture)
        defer { monitor.cancel() }
        #expect(await recorder.next()?.snapshot == Self.wired)

        let peerDown = try fixture.inPeer("link", "set", "vb", "down")
        let unsatisfied = try #require(await recorder.next())
        #expect(unsatisfied.snapshot == Self.unsatisfied)
        // Carrier changes reach netlink through the kernel's link watch, which batches them for up to a second
        // (measured with `ip -ts monitor link`: ~0.5-0.9 s), so this bound is the kernel's, not the monitor's.
        let latency = unsatisfied.instant - peerDown
        #expect(latency < TestTime.scaled(.milliseconds(1500)), "unsatisfied \(latency) after the peer went down")
        // Carrier loss keeps the IPv4 route, so carrier back is enough.
        try fixture.inPeer("link", "set", "vb", "up")
        #expect(await recorder.next()?.snapshot == Self.wired)
    }

    @Test(needsRoot) func ipv6DefaultRouteWithGlobalAddressIsSatisfied() async throws {
        let fixture = try NetworkNamespaceFixture()
        defer { fixture.remove() }
        try fixture.connect()
        try fixture.inWatched("route", "delete", "default")
        let (monitor, recorder) = try self.watch(fixture)
        defer { monitor.cancel() }
        #expect(await recorder.next()?.snapshot == Self.unsatisfied)

        try fixture.inWatched("-6", "addr", "add", "2001:db8::1/64", "dev", "va", "nodad")
        try fixture.inWatched("-6", "route", "add", "default", "via", "2001:db8::2", "dev", "va")
        #expect(await recorder.next()?.snapshot == Self.wired)
        try fixture.inWatched("-6", "addr", "delete", "2001:db8::1/64", "dev", "va")
        #expect(await recorder.next()?.snapshot == Self.unsatisfied)
    }

    @Test(needsRoot) func lostNotificationsAreRecoveredByANewDump() async throws {
        let fixture = try NetworkNamespaceFixture()
        defer { fixture.remove() }
        try fixture.connect()
        // The kernel's minimum receive buffer holds a handful of notifications; the burst overruns it.
        let monitor = try NetlinkPathMonitor(namespace: fixture.watchedPath, receiveBufferSize: 1)
        defer { monitor.cancel() }
        let recorder = SnapshotRecorder()
        monitor.start(recorder.record)
        #expect(await recorder.next()?.snapshot == Self.wired)

        let burst = (1...250).map { "addr add 10.77.\($0).1/24 dev va" } + ["link set va down"]
        try fixture.batchInWatched(burst)
        #expect(await recorder.next()?.snapshot == Self.unsatisfied)
        #expect(monitor.overrunCount > 0)
        try fixture.inWatched("link", "set", "va", "up")
        try fixture.inWatched("route", "add", "default", "via", "192.0.2.2", "dev", "va")
        #expect(await recorder.next()?.snapshot == Self.wired)
        #expect(recorder.unclaimed.isEmpty)
        #expect(monitor.failure == nil)
    }

    @Test(needsRoot) func cancelledMonitorDeliversNothingMore() async throws {
        let fixture = try NetworkNamespaceFixture()
        defer { fixture.remove() }
        try fixture.connect()
        let (cancelled, cancelledRecorder) = try self.watch(fixture)
        let (witness, witnessRecorder) = try self.watch(fixture)
        defer { witness.cancel() }
        #expect(await cancelledRecorder.next()?.snapshot == Self.wired)
        #expect(await witnessRecorder.next()?.snapshot == Self.wired)

        cancelled.cancel()
        try fixture.inWatched("link", "set", "va", "down")
        // The witness saw the change, so the kernel has sent it to both sockets.
        #expect(await witnessRecorder.next()?.snapshot == Self.unsatisfied)
        #expect(cancelledRecorder.unclaimed.isEmpty)
        #expect(cancelled.failure == nil)
        #expect(cancelled.threadEnded.wait(timeout: .now() + .seconds(3)) == .success)
    }

    @Test(needsRoot) func releasedMonitorEndsItsThread() throws {
        let fixture = try NetworkNamespaceFixture()
        defer { fixture.remove() }
        var monitor: NetlinkPathMonitor? = try NetlinkPathMonitor(namespace: fixture.watchedPath)
        let threadEnded = try #require(monitor?.threadEnded)
        monitor?.start { _ in }
        monitor = nil
        #expect(threadEnded.wait(timeout: .now() + .seconds(3)) == .success)
    }
}
#endif
