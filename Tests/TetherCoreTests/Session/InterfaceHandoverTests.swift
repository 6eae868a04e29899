import Testing
@testable import TetherCore

/// The make-before-break overlap as transcripts: generation 1 is open when the path moves to `eth1`.
@Suite struct InterfaceHandoverTests {
    static func handover(greets: Bool = false) -> InterfaceHandover {
        InterfaceHandover(drain: 500, connectTimeout: 1_000, greets: greets)
    }

    @Test func aSwitchOpensTheNextGenerationAtOnceGreetsItFirstMovesWritesThenClosesTheOldAfterTheDrain() {
        var handover = Self.handover(greets: true)
        #expect(handover.interfacesSwitched(current: 1, next: 2, interface: "eth1", now: 100)
            == [.open(generation: 2, interface: "eth1")])
        #expect(handover.writeGeneration == 1 && handover.nextWake == 1_100)
        #expect(handover.isLive(1) && handover.isLive(2))
        #expect(handover.transportOpened(generation: 2, now: 150) == [.sendGreeting(generation: 2)])
        #expect(handover.writeGeneration == 1)  // nothing is written to the new one before its greeting
        #expect(handover.greetingSent(generation: 2, now: 160) == [.moveWrites(to: 2)])
        #expect(handover.writeGeneration == 2 && handover.nextWake == 660)
        #expect(handover.timerFired(now: 659) == [])
        #expect(handover.timerFired(now: 660) == [.close(generation: 1)])
        #expect(handover.isLive(1))  // what it still reads is delivered until its end
        #expect(handover.nextWake == nil)
        #expect(handover.transportEnded(generation: 1, reason: .peerClosed(code: 1001)) == [.finished(generation: 2)])
        #expect(handover.state == .idle && !handover.isLive(1) && handover.writeGeneration == nil)
    }

    @Test func withoutAGreetingWritesMoveWhenTheNewGenerationOpens() {
        var handover = Self.handover()
        _ = handover.interfacesSwitched(current: 4, next: 5, interface: nil, now: 0)
        #expect(handover.transportOpened(generation: 5, now: 30) == [.moveWrites(to: 5)])
        #expect(handover.state == .draining(old: 4, new: 5, until: 530))
    }

    @Test func theNewGenerationFailingLeavesTheSessionOnTheOldOneToBeProbed() {
        var handover = Self.handover()
        _ = handover.interfacesSwitched(current: 1, next: 2, interface: "wwan0", now: 0)
        #expect(handover.transportEnded(generation: 2, reason: .connectFailed(.unreachable))
            == [.abandoned(new: 2, reason: .connectFailed(.unreachable), old: 1)])
        #expect(handover.state == .idle)

        _ = handover.interfacesSwitched(current: 1, next: 3, interface: "wwan0", now: 2_000)
        #expect(handover.timerFired(now: 2_999) == [])
        #expect(handover.timerFired(now: 3_000)
            == [.close(generation: 3), .abandoned(new: 3, reason: .connectTimeout, old: 1)])
        #expect(handover.transportEnded(generation: 3, reason: .connectTimeout) == [])  // its end comes later: stale
    }

    @Test func theOldGenerationEndingFirstHandsTheNewOneToTheSessionAsItsAttempt() {
        var handover = Self.handover(greets: true)
        _ = handover.interfacesSwitched(current: 1, next: 2, interface: nil, now: 0)
        _ = handover.transportOpened(generation: 2, now: 10)
        #expect(handover.transportEnded(generation: 1, reason: .receiveFailed) == [.oldEndedFirst(old: 1, new: 2)])
        #expect(handover.state == .idle)
        #expect(handover.greetingSent(generation: 2, now: 20) == [])  // the parent owns generation 2 now
    }

    @Test func eventsOfAnOtherGenerationChangeNothing() {
        var handover = Self.handover()
        _ = handover.interfacesSwitched(current: 1, next: 2, interface: nil, now: 0)
        let before = handover
        #expect(handover.transportOpened(generation: 7, now: 5) == [])
        #expect(handover.transportEnded(generation: 7, reason: .receiveFailed) == [])
        #expect(handover == before)
        #expect(!handover.isLive(0) && !handover.isLive(3))
    }

    @Test func aSecondSwitchBeforeTheMoveReplacesTheNewGenerationAndOneDuringTheDrainEndsIt() {
        var handover = Self.handover()
        _ = handover.interfacesSwitched(current: 1, next: 2, interface: "eth1", now: 0)
        #expect(handover.interfacesSwitched(current: 1, next: 3, interface: "eth2", now: 10)
            == [.close(generation: 2), .open(generation: 3, interface: "eth2")])
        #expect(handover.writeGeneration == 1 && !handover.isLive(2))
        _ = handover.transportOpened(generation: 3, now: 20)
        #expect(handover.interfacesSwitched(current: 3, next: 4, interface: "eth1", now: 30)
            == [.close(generation: 1), .open(generation: 4, interface: "eth1")])
        #expect(handover.state == .connecting(old: 3, new: 4, deadline: 1_030, greeting: false))
    }

    @Test func theSessionsConnectionEndingDuringTheDrainClosesTheOldOne() {
        var handover = Self.handover()
        _ = handover.interfacesSwitched(current: 1, next: 2, interface: nil, now: 0)
        _ = handover.transportOpened(generation: 2, now: 10)
        #expect(handover.transportEnded(generation: 2, reason: .receiveFailed) == [.close(generation: 1)])
        #expect(handover.state == .idle)
    }
}
