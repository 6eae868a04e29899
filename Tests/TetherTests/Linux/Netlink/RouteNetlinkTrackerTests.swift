#if os(Linux)
import Testing
@testable import Tether

@Suite struct RouteNetlinkTrackerTests {
    typealias Bytes = RouteNetlinkBytes
    static let wired = PathSnapshot(status: .satisfied, interfaces: [.wiredEthernet], interfaceNames: ["eth0"])

    /// The type and sequence number of each request.
    func requests(_ requests: [[UInt8]]) -> [(type: UInt16, sequence: UInt32)] {
        requests.flatMap { NetlinkMessage.split($0).messages.map { ($0.type, $0.sequence) } }
    }

    func expectRequest(_ requests: [[UInt8]], _ type: UInt16) -> UInt32 {
        let decoded = self.requests(requests)
        #expect(decoded.map(\.type) == [type])
        let message = NetlinkMessage.split(requests.first ?? []).messages.first
        #expect(message.map { $0.flags & Netlink.HeaderFlag.dump == Netlink.HeaderFlag.dump } == true)
        return decoded.first?.sequence ?? 0
    }

    /// Runs a full sync answered with eth0, its address and a default route.
    func syncedTracker() -> RouteNetlinkTracker {
        var tracker = RouteNetlinkTracker()
        let links = self.expectRequest(tracker.resynchronize(), Netlink.MessageType.getLink)
        var step = tracker.receive(Bytes.link(index: 2, name: "eth0", sequence: links) + Bytes.done(sequence: links))
        let addresses = self.expectRequest(step.requests, Netlink.MessageType.getAddress)
        step = tracker.receive(Bytes.address(index: 2, [192, 0, 2, 1], sequence: addresses))
        step = tracker.receive(Bytes.done(sequence: addresses))
        let routes = self.expectRequest(step.requests, Netlink.MessageType.getRoute)
        step = tracker.receive(Bytes.route(outputLink: 2, sequence: routes) + Bytes.done(sequence: routes))
        #expect(step.requests.isEmpty)
        #expect(step.snapshot == Self.wired)
        return tracker
    }

    @Test func syncDumpsLinksThenAddressesThenRoutesAndReportsOnlyWhenComplete() {
        var tracker = RouteNetlinkTracker()
        let links = self.expectRequest(tracker.resynchronize(), Netlink.MessageType.getLink)
        var step = tracker.receive(Bytes.link(index: 2, name: "eth0", sequence: links))
        #expect(step.snapshot == nil)
        step = tracker.receive(Bytes.done(sequence: links))
        #expect(step.snapshot == nil)
        let addresses = self.expectRequest(step.requests, Netlink.MessageType.getAddress)
        step = tracker.receive(Bytes.done(sequence: addresses))
        let routes = self.expectRequest(step.requests, Netlink.MessageType.getRoute)
        #expect(routes > addresses && addresses > links)
        step = tracker.receive(Bytes.done(sequence: routes))
        #expect(step == RouteNetlinkTracker.Step(snapshot: PathSnapshot(status: .unsatisfied)))
        #expect(tracker.isSynced)
    }

    @Test func notificationsDuringTheDumpAreAppliedButNotReported() {
        var tracker = RouteNetlinkTracker()
        let links = self.expectRequest(tracker.resynchronize(), Netlink.MessageType.getLink)
        var step = tracker.receive(Bytes.link(index: 2, name: "eth0", sequence: links))
        step = tracker.receive(Bytes.address(index: 2, [192, 0, 2, 1]) + Bytes.route(outputLink: 2))
        #expect(step.snapshot == nil)
        step = tracker.receive(Bytes.done(sequence: links))
        let addresses = self.expectRequest(step.requests, Netlink.MessageType.getAddress)
        step = tracker.receive(Bytes.done(sequence: addresses))
        let routes = self.expectRequest(step.requests, Netlink.MessageType.getRoute)
        step = tracker.receive(Bytes.done(sequence: routes))
        #expect(step.snapshot == Self.wired)
    }

    @Test func notificationAfterSyncReportsTheSnapshot() {
        var tracker = self.syncedTracker()
        let step = tracker.receive(Bytes.link(index: 2, name: "eth0", flags: Bytes.down))
        #expect(step == RouteNetlinkTracker.Step(snapshot: PathSnapshot(status: .unsatisfied)))
    }

    @Test func doneOfAnotherSequenceDoesNotEndTheDump() {
        var tracker = RouteNetlinkTracker()
        let links = self.expectRequest(tracker.resynchronize(), Netlink.MessageType.getLink)
        let step = tracker.receive(Bytes.done(sequence: links &+ 1000))
        #expect(step == RouteNetlinkTracker.Step())
        #expect(!tracker.isSynced)
    }

    @Test func resyncRequestedDuringADumpStartsOverWhenTheDumpEnds() {
        var tracker = RouteNetlinkTracker()
        let links = self.expectRequest(tracker.resynchronize(), Netlink.MessageType.getLink)
        // The kernel allows one dump per socket: nothing is sent until the running one ends.
        #expect(tracker.resynchronize().isEmpty)
        let step = tracker.receive(Bytes.link(index: 2, name: "eth0", sequence: links) + Bytes.done(sequence: links))
        let again = self.expectRequest(step.requests, Netlink.MessageType.getLink)
        #expect(again > links)
        #expect(tracker.model.links.isEmpty)
    }

    @Test func overrunMessageStartsASync() {
        var tracker = self.syncedTracker()
        let overrun = NetlinkMessage.encode(type: Netlink.MessageType.overrun, flags: 0, sequence: 0, payload: [])
        let step = tracker.receive(overrun)
        _ = self.expectRequest(step.requests, Netlink.MessageType.getLink)
        #expect(step.snapshot == nil)
        #expect(tracker.model == RouteNetlinkModel())
    }

    @Test func interruptedDumpStartsOver() {
        var tracker = RouteNetlinkTracker()
        let links = self.expectRequest(tracker.resynchronize(), Netlink.MessageType.getLink)
        let interrupted = Netlink.HeaderFlag.multipart | Netlink.HeaderFlag.dumpInterrupted
        var step = tracker.receive(Bytes.link(index: 2, name: "eth0", sequence: links, headerFlags: interrupted))
        step = tracker.receive(Bytes.done(sequence: links))
        _ = self.expectRequest(step.requests, Netlink.MessageType.getLink)
    }

    @Test func refusedDumpStartsTheSyncOverAndIsReportedWhenRefusedAgainAndAgain() {
        var tracker = RouteNetlinkTracker()
        var sequence = self.expectRequest(tracker.resynchronize(), Netlink.MessageType.getLink)
        for _ in 1..<RouteNetlinkTracker.refusalLimit {
            let step = tracker.receive(Bytes.error(sequence: sequence, code: -1 /* EPERM */))
            #expect(step.refusal == nil && step.snapshot == nil)
            sequence = self.expectRequest(step.requests, Netlink.MessageType.getLink)
        }
        let step = tracker.receive(Bytes.error(sequence: sequence, code: -1))
        #expect(step.refusal == -1)
    }

    @Test func dumpsRefusedForAFullQueueAreRetriedWithoutGivingUp() {
        var tracker = RouteNetlinkTracker()
        var sequence = self.expectRequest(tracker.resynchronize(), Netlink.MessageType.getLink)
        for _ in 0..<(3 * RouteNetlinkTracker.refusalLimit) {
            let step = tracker.receive(Bytes.error(sequence: sequence, code: -105 /* ENOBUFS */))
            #expect(step.refusal == nil && step.snapshot == nil)
            sequence = self.expectRequest(step.requests, Netlink.MessageType.getLink)
        }
        for expected in [Netlink.MessageType.getAddress, Netlink.MessageType.getRoute] {
            sequence = self.expectRequest(tracker.receive(Bytes.done(sequence: sequence)).requests, expected)
        }
        #expect(tracker.receive(Bytes.done(sequence: sequence)).snapshot == PathSnapshot(status: .unsatisfied))
    }

    @Test func completedSyncForgetsEarlierRefusals() {
        var tracker = RouteNetlinkTracker()
        var sequence = self.expectRequest(tracker.resynchronize(), Netlink.MessageType.getLink)
        for _ in 1..<RouteNetlinkTracker.refusalLimit {
            sequence = self.expectRequest(
                tracker.receive(Bytes.error(sequence: sequence, code: -1)).requests,
                Netlink.MessageType.getLink
            )
        }
        for expected in [Netlink.MessageType.getAddress, Netlink.MessageType.getRoute] {
            sequence = self.expectRequest(tracker.receive(Bytes.done(sequence: sequence)).requests, expected)
        }
        #expect(tracker.receive(Bytes.done(sequence: sequence)).snapshot == PathSnapshot(status: .unsatisfied))
        let overrun = NetlinkMessage.encode(type: Netlink.MessageType.overrun, flags: 0, sequence: 0, payload: [])
        sequence = self.expectRequest(tracker.receive(overrun).requests, Netlink.MessageType.getLink)
        let step = tracker.receive(Bytes.error(sequence: sequence, code: -1))
        #expect(step.refusal == nil)
        _ = self.expectRequest(step.requests, Netlink.MessageType.getLink)
    }

    @Test func malformedDatagramAfterSyncAppliesTheGoodPrefixAndResyncs() {
        var tracker = self.syncedTracker()
        let step = tracker.receive(Bytes.link(index: 2, name: "eth0", flags: Bytes.down) + [0xFF, 0xFF])
        _ = self.expectRequest(step.requests, Netlink.MessageType.getLink)
        #expect(step.snapshot == nil)
        #expect(!tracker.isSynced)
    }

    @Test func unreadableErrorReplyToTheDumpStartsTheSyncOver() {
        var tracker = RouteNetlinkTracker()
        let links = self.expectRequest(tracker.resynchronize(), Netlink.MessageType.getLink)
        let truncatedError = NetlinkMessage.encode(
            type: Netlink.MessageType.error, flags: 0, sequence: links, payload: [1]
        )
        let again = self.expectRequest(tracker.receive(truncatedError).requests, Netlink.MessageType.getLink)
        #expect(again > links)
    }

    @Test func undecodableMessageResyncs() {
        var tracker = self.syncedTracker()
        let truncatedRoute = NetlinkMessage.encode(
            type: Netlink.MessageType.newRoute, flags: 0, sequence: 0, payload: [2]
        )
        let step = tracker.receive(truncatedRoute)
        _ = self.expectRequest(step.requests, Netlink.MessageType.getLink)
    }
}
#endif
