import Testing
import TetherCore

/// Transcripts of make-before-break (`InterfaceSwitchPolicy.makeBeforeBreak`): a switch of interfaces while open
/// opens a second connection, the session moves to it, and the old one drains and closes.
extension SessionMachineTests {
    static let wifi = PathReport(state: .available, interfaces: ["wifi", "wlan0"])
    static let cellular = PathReport(state: .available, interfaces: ["cellular", "rmnet0"])
    static let ethernet = PathReport(state: .available, interfaces: ["wiredEthernet", "eth1"])

    /// Open on generation 1 (at 100) under make-before-break with a 500 ms drain, the path reported on Wi-Fi; returns
    /// the machine and its monitor generation.
    func openForHandover(greets: Bool = false, recordsMessages: Bool = false) -> (Machine, monitor: Int) {
        var configuration = Self.noJitter
        configuration.interfaceSwitch = .makeBeforeBreak(drain: .milliseconds(500))
        configuration.greets = greets
        configuration.recordsMessages = recordsMessages
        var m = self.machine(configuration)
        let monitor = m.restartPathMonitor()
        #expect(m.pathReported(monitor: monitor, Self.wifi, now: 0) == .none)
        #expect(m.start(now: 0) == .openTransport(generation: 1))
        if greets {
            #expect(m.transportOpened(generation: 1, now: 100) == .sendGreeting(generation: 1))
            #expect(m.greetingSent(generation: 1, now: 100) == .none)
        } else {
            #expect(m.transportOpened(generation: 1, now: 100) == .none)
        }
        _ = m.statusChange()
        _ = self.records(&m)
        return (m, monitor)
    }

    @Test func aSwitchOpensTheNewConnectionAtOnceTheSessionStaysOpenAndMovesOnceItOpens() {
        var (m, monitor) = self.openForHandover(recordsMessages: true)
        #expect(m.pathReported(monitor: monitor, Self.cellular, now: 1_000) == .openTransport(generation: 2))
        #expect(m.phase == .open && m.generation == 1 && m.attempts == 0)
        #expect(m.sendRoute == .direct(generation: 1))  // writes stay on the old connection until the move
        #expect(m.nextWake == 11_000)  // the new connection's connect deadline
        #expect(m.statusChange() == nil)  // nothing a UI shows changed: no `.connecting`
        #expect(m.messageReceived(generation: 1, bytes: 1, now: 1_010) == .deliver)
        #expect(m.messageReceived(generation: 2, bytes: 2, now: 1_020) == .deliver)

        #expect(m.transportOpened(generation: 2, now: 1_100) == .none)
        #expect(m.phase == .open && m.generation == 2)
        #expect(m.sendRoute == .direct(generation: 2))
        #expect(m.statusChange()?.status.generation == 2)
        #expect(m.nextWake == 1_600)  // the drain ends
        #expect(m.messageReceived(generation: 1, bytes: 3, now: 1_200) == .deliver)  // the old one drains

        #expect(m.timerFired(now: 1_600) == .closeTransport(generation: 1, reason: .handedOver, code: 1001))
        #expect(m.followUp() == nil)
        #expect(m.messageReceived(generation: 1, bytes: 4, now: 1_650) == .deliver)  // until its end
        #expect(m.transportEnded(generation: 1, end: .peerClosed(code: 1001), now: 1_700) == .none)
        #expect(m.staleEvents == 0)
        #expect(m.messageReceived(generation: 1, bytes: 5, now: 1_750) == .discard)  // after its end: stale
        #expect(m.staleEvents == 1)
        #expect(m.nextWake == 16_100)  // the new connection's own heartbeat
        #expect(m.timerFired(now: 16_100) == .sendPing(generation: 2, ping: 1))

        let story = self.records(&m).map { "\($0.kind.rawValue)@\($0.generation) \($0.from)>\($0.to)" }
        #expect(story == [
            "path@1 open>open", "handover@2 open>open", "message@1 open>open", "message@2 open>open",
            "handover@2 open>open", "message@1 open>open", "closed@1 open>open", "message@1 open>open",
            "stale@1 open>open", "ping@2 open>open",
        ])
        #expect(m.phase == .open && m.attempts == 0)
    }

    @Test func theGreetingGoesOnTheNewConnectionFirstAndTheOutboxFollowsTheSession() {
        var (m, monitor) = self.openForHandover(greets: true)
        #expect(m.pathReported(monitor: monitor, Self.cellular, now: 1_000) == .openTransport(generation: 2))
        #expect(m.transportOpened(generation: 2, now: 1_100) == .sendGreeting(generation: 2))
        // Meanwhile the session writes to the old connection.
        #expect(m.messageQueued(bytes: 10, expiresAfter: nil, now: 1_150)
            == .accepted(ticket: 0, action: .writeQueued(generation: 1, ticket: 0)))
        #expect(m.messageQueued(bytes: 10, expiresAfter: nil, now: 1_160) == .accepted(ticket: 1, action: .none))
        #expect(m.greetingSent(generation: 2, now: 1_200) == .none)  // the write on the old one is in flight
        #expect(m.generation == 2 && m.sendRoute == .behindOutbox(generation: 2))
        #expect(m.writeFinished(generation: 1, result: .written, now: 1_250) == .writeQueued(generation: 2, ticket: 1))
        #expect(m.writeFinished(generation: 2, result: .written, now: 1_300) == .none)
        #expect(m.sendRoute == .direct(generation: 2))
        let steps = self.records(&m).compactMap { if case .handover(let step) = $0.event { step } else { nil } }
        #expect(steps == [.opening, .moved])
    }

    @Test func aNewConnectionThatFailsLeavesTheSessionOnTheOldOneAndProbesIt() {
        var (m, monitor) = self.openForHandover()
        #expect(m.pathReported(monitor: monitor, Self.cellular, now: 1_000) == .openTransport(generation: 2))
        #expect(m.transportEnded(generation: 2, end: .connectFailed(.refused), now: 1_050)
            == .sendPing(generation: 1, ping: 1))
        #expect(m.followUp() == nil)
        #expect(m.phase == .open && m.generation == 1 && m.attempts == 0)
        #expect(m.nextWake == 3_050)  // the probe's deadline (`probeTimeout`, 2 s)
        #expect(m.pongReceived(generation: 1, ping: 1, now: 1_080) == .none)
        #expect(m.phase == .open)
        // The new connection is gone: its late events are stale.
        #expect(m.transportOpened(generation: 2, now: 1_090) == .none)
        #expect(m.staleEvents == 1)
        let records = self.records(&m)
        let closed = records.first { $0.kind == .closed }
        #expect(closed?.generation == 2 && closed?.reason == .connectFailed(.refused))
        #expect(records.contains { $0.event == .handover(.abandoned) && $0.generation == 2 })
        #expect(m.statusChange() == nil)  // still open on generation 1: nothing a UI shows changed
    }

    @Test func aNewConnectionThatMissesItsDeadlineIsClosedAndTheOldOneProbed() {
        var (m, monitor) = self.openForHandover()
        #expect(m.pathReported(monitor: monitor, Self.cellular, now: 1_000) == .openTransport(generation: 2))
        #expect(m.timerFired(now: 10_999) == .none)
        #expect(m.timerFired(now: 11_000) == .closeTransport(generation: 2, reason: .connectTimeout, code: 1001))
        #expect(m.followUp() == .sendPing(generation: 1, ping: 1))
        #expect(m.followUp() == nil)
        #expect(m.transportEnded(generation: 2, end: .closedLocally, now: 11_010) == .none)  // expected
        #expect(m.staleEvents == 0 && m.phase == .open && m.generation == 1)
    }

    @Test func theOldConnectionEndingFirstMakesTheNewOneTheAttemptAsAPathDrivenReconnect() {
        var (m, monitor) = self.openForHandover()
        #expect(m.pathReported(monitor: monitor, Self.cellular, now: 1_000) == .openTransport(generation: 2))
        #expect(m.transportEnded(generation: 1, end: .receiveFailed, now: 1_050) == .none)
        #expect(m.phase == .connecting && m.generation == 2 && m.attempts == 0)
        #expect(m.statusChange()?.cause == .receiveFailed)
        #expect(m.sendRoute == .closed)
        #expect(m.nextWake == 11_000)  // still the new connection's deadline
        #expect(m.transportOpened(generation: 2, now: 1_100) == .none)
        #expect(m.phase == .open && m.generation == 2)
        #expect(m.messageReceived(generation: 1, bytes: 1, now: 1_200) == .discard)  // after its end: stale
        let steps = self.records(&m).compactMap { if case .handover(let step) = $0.event { step } else { nil } }
        #expect(steps == [.opening, .oldEndedFirst])
    }

    @Test func aPongTimeoutOnTheOldConnectionBeforeTheMoveClosesItAndTheNewOneCarriesOn() {
        var (m, monitor) = self.openForHandover()
        #expect(m.timerFired(now: 15_100) == .sendPing(generation: 1, ping: 1))
        #expect(m.pathReported(monitor: monitor, Self.cellular, now: 16_000) == .openTransport(generation: 2))
        #expect(m.timerFired(now: 20_100) == .closeTransport(generation: 1, reason: .pongTimeout, code: 1001))
        #expect(m.phase == .connecting && m.generation == 2 && m.attempts == 0)
        #expect(m.messageReceived(generation: 1, bytes: 1, now: 20_150) == .deliver)  // closing: until its end
        #expect(m.transportEnded(generation: 1, end: .peerClosed(code: 1001), now: 20_200) == .none)
        #expect(m.staleEvents == 0)
        #expect(m.transportOpened(generation: 2, now: 20_300) == .none)
        #expect(m.phase == .open && m.generation == 2)
    }

    @Test func theNewConnectionEndingDuringTheDrainEndsTheSessionsConnectionAndClosesTheOld() {
        var (m, monitor) = self.openForHandover()
        #expect(m.pathReported(monitor: monitor, Self.cellular, now: 1_000) == .openTransport(generation: 2))
        #expect(m.transportOpened(generation: 2, now: 1_100) == .none)
        #expect(m.transportEnded(generation: 2, end: .receiveFailed, now: 1_200)
            == .closeTransport(generation: 1, reason: .handedOver, code: 1001))
        #expect(m.phase == .waiting && m.attempts == 1)
        #expect(m.transportEnded(generation: 1, end: .peerClosed(code: 1001), now: 1_250) == .none)
        #expect(m.staleEvents == 0)
    }

    @Test func stopDuringAHandoverClosesBothConnections() {
        var (m, monitor) = self.openForHandover()
        #expect(m.pathReported(monitor: monitor, Self.cellular, now: 1_000) == .openTransport(generation: 2))
        #expect(m.stop(now: 1_050) == .closeTransport(generation: 1, reason: .userStopped, code: 1000))
        #expect(m.followUp() == .closeTransport(generation: 2, reason: .userStopped, code: 1000))
        #expect(m.followUp() == nil)
        #expect(m.phase == .stopped)
        #expect(m.transportEnded(generation: 2, end: .closedLocally, now: 1_060) == .none)
        #expect(m.transportEnded(generation: 1, end: .peerClosed(code: 1000), now: 1_070) == .none)
        #expect(m.staleEvents == 0)
    }

    @Test func theBackgroundDuringADrainClosesBothAndWaitsForTheSessionsClose() {
        var (m, monitor) = self.openForHandover()
        #expect(m.pathReported(monitor: monitor, Self.cellular, now: 1_000) == .openTransport(generation: 2))
        #expect(m.transportOpened(generation: 2, now: 1_100) == .none)
        #expect(m.enteredBackground(now: 1_200)
            == .closeTransport(generation: 2, reason: .enteredBackground, code: 1001, reportSent: true))
        #expect(m.followUp() == .closeTransport(generation: 1, reason: .enteredBackground, code: 1001))
        #expect(m.phase == .suspended)
    }

    @Test func aSecondSwitchReplacesTheOpeningConnectionAndOneDuringTheDrainEndsIt() {
        var (m, monitor) = self.openForHandover()
        #expect(m.pathReported(monitor: monitor, Self.cellular, now: 1_000) == .openTransport(generation: 2))
        #expect(m.pathReported(monitor: monitor, Self.ethernet, now: 1_050)
            == .closeTransport(generation: 2, reason: .handedOver, code: 1001))
        #expect(m.followUp() == .openTransport(generation: 3))
        #expect(m.generation == 1)
        #expect(m.transportEnded(generation: 2, end: .closedLocally, now: 1_060) == .none)  // the end of its close
        #expect(m.staleEvents == 0)
        #expect(m.transportOpened(generation: 3, now: 1_100) == .none)
        #expect(m.generation == 3)
        // During the drain of 1, a switch back to Wi-Fi closes 1 at once and opens 4 beside 3.
        #expect(m.pathReported(monitor: monitor, Self.wifi, now: 1_200)
            == .closeTransport(generation: 1, reason: .handedOver, code: 1001))
        #expect(m.followUp() == .openTransport(generation: 4))
        #expect(m.transportOpened(generation: 4, now: 1_300) == .none)
        #expect(m.generation == 4 && m.phase == .open && m.attempts == 0)
    }

    /// The README promises everything the old connection receives until its end: a second switch during the drain
    /// closes it at once, and what it still reads before its end is delivered (it was discarded as stale: the new
    /// handover's side replaced the old one's, and the machine forgot the connection it had just closed).
    @Test func aSecondSwitchDuringTheDrainStillDeliversWhatTheOldConnectionReadsUntilItsEnd() {
        var (m, monitor) = self.openForHandover(recordsMessages: true)
        #expect(m.pathReported(monitor: monitor, Self.cellular, now: 1_000) == .openTransport(generation: 2))
        #expect(m.transportOpened(generation: 2, now: 1_100) == .none)  // moved: 1 drains until 1_600
        #expect(m.messageReceived(generation: 1, bytes: 1, now: 1_150) == .deliver)
        #expect(m.pathReported(monitor: monitor, Self.ethernet, now: 1_200)
            == .closeTransport(generation: 1, reason: .handedOver, code: 1001))
        #expect(m.followUp() == .openTransport(generation: 3))
        #expect(m.messageReceived(generation: 1, bytes: 2, now: 1_210) == .deliver)  // read before its end
        #expect(m.pongReceived(generation: 1, ping: 9, now: 1_215) == .none)  // a late pong: nothing, no stale
        #expect(m.messageReceived(generation: 2, bytes: 3, now: 1_220) == .deliver)  // the session's
        #expect(m.transportEnded(generation: 1, end: .peerClosed(code: 1001), now: 1_250) == .none)
        #expect(m.staleEvents == 0)
        #expect(m.messageReceived(generation: 1, bytes: 4, now: 1_260) == .discard)  // after its end: stale
        #expect(m.staleEvents == 1)
        // The same for a side that was already closing when the next switch came: 2 drains, its drain ends, then a
        // switch before its end.
        #expect(m.transportOpened(generation: 3, now: 1_300) == .none)  // moved to 3: 2 drains
        #expect(m.timerFired(now: 1_800) == .closeTransport(generation: 2, reason: .handedOver, code: 1001))
        #expect(m.pathReported(monitor: monitor, Self.wifi, now: 1_850) == .openTransport(generation: 4))
        #expect(m.messageReceived(generation: 2, bytes: 5, now: 1_860) == .deliver)
        #expect(m.transportEventsFinished(generation: 2, now: 1_870) == .none)  // its stream finishing is its end
        #expect(m.messageReceived(generation: 2, bytes: 6, now: 1_880) == .discard)
        #expect(m.staleEvents == 2)
        #expect(m.phase == .open && m.generation == 3 && m.attempts == 0)
        let delivered = self.records(&m).filter { $0.kind == .message }.map { "\($0.generation)" }
        #expect(delivered == ["1", "1", "2", "2"])
    }

    @Test func underProbeASwitchOpensNothingAndProbes() {
        var m = self.opened()
        let monitor = m.restartPathMonitor()
        #expect(m.pathReported(monitor: monitor, Self.wifi, now: 200) == .none)
        #expect(m.pathReported(monitor: monitor, Self.cellular, now: 300) == .sendPing(generation: 1, ping: 1))
        #expect(m.generation == 1)
    }

    @Test func aSwitchWhileConnectingIsNoHandover() {
        var configuration = Self.noJitter
        configuration.interfaceSwitch = .makeBeforeBreak()
        var m = self.machine(configuration)
        let monitor = m.restartPathMonitor()
        #expect(m.pathReported(monitor: monitor, Self.wifi, now: 0) == .none)
        #expect(m.start(now: 0) == .openTransport(generation: 1))
        #expect(m.pathReported(monitor: monitor, Self.cellular, now: 10) == .none)  // nothing open to keep
        #expect(m.followUp() == nil)
    }
}
