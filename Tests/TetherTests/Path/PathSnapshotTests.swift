import Testing
import TetherCore
@testable import Tether

@Suite struct PathSnapshotTests {
    /// Stands in for `NWPath`, which exists only on Apple platforms.
    struct FakePath: PathDescribing {
        var knownStatus: PathStatus?
        var isExpensive = false
        var isConstrained = false
        var interfaceKinds: [InterfaceKind] = []
        var interfaceNames: [String] = []
    }

    @Test func statusMapsToTheHintState() {
        #expect(PathSnapshot(status: .satisfied).pathState == .available)
        #expect(PathSnapshot(status: .unsatisfied).pathState == .unavailable)
        #expect(PathSnapshot(status: .requiresConnection).pathState == .needsConnection)
        #expect(PathSnapshot(status: .unknown).pathState == .unknown)
    }

    @Test func describedPathKeepsStatusCostAndInterfaces() {
        let path = FakePath(
            knownStatus: .satisfied, isExpensive: true, isConstrained: true, interfaceKinds: [.cellular, .wifi],
            interfaceNames: ["pdp_ip0", "en0"]
        )
        #expect(
            PathSnapshot(describing: path)
                == PathSnapshot(
                    status: .satisfied, isExpensive: true, isConstrained: true, interfaces: [.cellular, .wifi],
                    interfaceNames: ["pdp_ip0", "en0"]
                )
        )
        #expect(PathSnapshot(describing: FakePath(knownStatus: .requiresConnection)).pathState == .needsConnection)
        #expect(PathSnapshot(describing: FakePath(knownStatus: .unsatisfied)).pathState == .unavailable)
    }

    @Test func interfacesChangeWhenKindsOrNamesDifferButNotWithCostOrStatus() {
        let eth0 = PathSnapshot(status: .satisfied, interfaces: [.wiredEthernet], interfaceNames: ["eth0"])
        let eth1 = PathSnapshot(status: .satisfied, interfaces: [.wiredEthernet], interfaceNames: ["eth1"])
        let wifi = PathSnapshot(status: .satisfied, interfaces: [.wifi], interfaceNames: ["eth0"])
        var expensive = eth0
        expensive.isExpensive = true
        #expect(eth1.changesInterfaces(from: eth0))
        #expect(eth1 != eth0)  // so a monitor that filters repeats delivers the move
        #expect(wifi.changesInterfaces(from: eth0))
        #expect(!expensive.changesInterfaces(from: eth0))
        #expect(!PathSnapshot(status: .unsatisfied).changesInterfaces(from: PathSnapshot(status: .unknown)))
    }

    @Test func unknownFutureStatusMapsToUnknownNeverOffline() {
        let futurePath = FakePath(knownStatus: nil, isExpensive: true, interfaceKinds: [.other])
        let snapshot = PathSnapshot(describing: futurePath)
        #expect(snapshot == PathSnapshot(status: .unknown, isExpensive: true, interfaces: [.other]))
        var hint = NetworkHint()
        let generation = hint.restart()
        hint.accept(generation: generation, state: .available)
        hint.accept(generation: generation, state: snapshot.pathState, expensive: snapshot.isExpensive)
        #expect(hint.state == .unknown)
    }
}
