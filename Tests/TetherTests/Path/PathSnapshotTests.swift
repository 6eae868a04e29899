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
    }

    @Test func statusMapsToTheHintState() {
        #expect(PathSnapshot(status: .satisfied).pathState == .available)
        #expect(PathSnapshot(status: .unsatisfied).pathState == .unavailable)
        #expect(PathSnapshot(status: .requiresConnection).pathState == .needsConnection)
        #expect(PathSnapshot(status: .unknown).pathState == .unknown)
    }

    @Test func describedPathKeepsStatusCostAndInterfaces() {
        let path = FakePath(
            knownStatus: .satisfied, isExpensive: true, isConstrained: true, interfaceKinds: [.cellular, .wifi]
        )
        #expect(
            PathSnapshot(describing: path)
                == PathSnapshot(
                    status: .satisfied, isExpensive: true, isConstrained: true, interfaces: [.cellular, .wifi]
                )
        )
        #expect(PathSnapshot(describing: FakePath(knownStatus: .requiresConnection)).pathState == .needsConnection)
        #expect(PathSnapshot(describing: FakePath(knownStatus: .unsatisfied)).pathState == .unavailable)
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
