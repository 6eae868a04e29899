import Testing
import TetherCore

/// Transcripts of the decisions a driver used to take itself: the consumer's backlog, interface switches, a
/// greeting that failed, an event stream that finished, the background close wait and what is published.
extension SessionMachineTests {
    func closeWaitEnded(_ m: inout Machine) -> Bool {
        m.closeWaitEnded()
    }

    @Test func aBacklogHoldsEveryTransportAndPausesThePongDeadlineUntilReleased() {
        var m = self.opened()
        #expect(m.timerFired(now: 15_100) == .sendPing(generation: 1, ping: 1))
        #expect(m.nextWake == 20_100)
        #expect(m.consumerBacklogChanged(held: true, now: 16_000) == .holdReading(true))
        #expect(m.readingHeld)
        #expect(m.consumerBacklogChanged(held: true, now: 16_001) == .none)  // a repeated report
        #expect(m.nextWake == nil)  // the pong may be sitting unread: no deadline runs
        #expect(m.consumerBacklogChanged(held: false, now: 30_000) == .holdReading(false))
        #expect(m.nextWake == 35_000)  // a full timeout from the release
        let kinds = self.records(&m).map(\.kind)
        #expect(kinds.suffix(2) == [.readingHeld, .readingResumed])
    }

    @Test func twoUsableReportsWithDifferentInterfacesProbeTheOpenConnection() {
        var m = self.opened()
        let monitor = m.restartPathMonitor()
        let wifi = PathReport(state: .available, interfaces: ["wifi", "wlan0"])
        #expect(m.pathReported(monitor: monitor, wifi, now: 200) == .none)
        #expect(m.pathReported(monitor: monitor, wifi, now: 300) == .none)  // nothing changed
        let cellular = PathReport(state: .available, interfaces: ["cellular", "rmnet0"])
        #expect(m.pathReported(monitor: monitor, cellular, now: 400) == .sendPing(generation: 1, ping: 1))
        // A new monitor starts without a previous report: its first report is no switch.
        let next = m.restartPathMonitor()
        #expect(m.pathReported(monitor: next, wifi, now: 500) == .none)
        #expect(m.pathReported(monitor: monitor, cellular, now: 600) == .none)  // the old monitor: stale
        #expect(m.staleEvents == 1)
    }

    @Test func aSwitchThroughAnUnusablePathIsNoSwitch() {
        var m = self.opened()
        let monitor = m.restartPathMonitor()
        #expect(m.pathReported(monitor: monitor, PathReport(state: .available, interfaces: ["wifi"]), now: 200)
            == .none)
        #expect(m.pathReported(monitor: monitor, PathReport(state: .unavailable), now: 300) == .none)
        // The path came back: a probe, as for any return, not because interfaces differ.
        #expect(m.pathReported(monitor: monitor, PathReport(state: .available, interfaces: ["cellular"]), now: 400)
            == .sendPing(generation: 1, ping: 1))
    }

    @Test func aFailedGreetingClosesAtOnceAndBacksOff() {
        var configuration = Self.noJitter
        configuration.greets = true
        var m = self.machine(configuration)
        #expect(m.start(now: 0) == .openTransport(generation: 1))
        #expect(m.transportOpened(generation: 1, now: 10) == .sendGreeting(generation: 1))
        #expect(m.greetingFailed(generation: 1, now: 20)
            == .closeTransport(generation: 1, reason: .receiveFailed, code: 1001))
        #expect(m.phase == .waiting)
        #expect(m.retryAt == 1_020)
        #expect(m.greetingFailed(generation: 1, now: 21) == .none)  // stale: its close was ordered
        #expect(m.staleEvents == 1)
    }

    @Test func aStreamThatFinishesWithoutAnEndIsABrokenConnection() {
        var m = self.opened()
        #expect(m.transportEventsFinished(generation: 1, now: 200) == .none)
        #expect(m.phase == .waiting)
        #expect(m.failure == nil && m.attempts == 1)
        let closed = self.records(&m).last { $0.kind == .closed }
        #expect(closed?.reason == .receiveFailed)
        // After its end, its stream finishing changes nothing and is not stale.
        #expect(m.transportEventsFinished(generation: 1, now: 201) == .none)
        #expect(m.staleEvents == 0)
    }

    @Test func aStreamThatFinishesAfterTheMachinesCloseIsThatClosesEnd() {
        var m = self.opened()
        #expect(m.stop(now: 200) == .closeTransport(generation: 1, reason: .userStopped, code: 1000))
        #expect(m.messageReceived(generation: 1, bytes: 3, now: 201) == .deliver)  // closing: still delivered
        #expect(m.transportEventsFinished(generation: 1, now: 202) == .none)
        #expect(m.messageReceived(generation: 1, bytes: 3, now: 203) == .discard)
    }

    @Test func pingsAndGreetingsNameTheConnectionTheyAreForAndAnOlderOnesLateEventsChangeNothing() {
        var configuration = Self.noJitter
        configuration.greets = true
        var m = self.machine(configuration)
        #expect(m.start(now: 0) == .openTransport(generation: 1))
        #expect(m.transportOpened(generation: 1, now: 100) == .sendGreeting(generation: 1))
        #expect(m.greetingSent(generation: 1, now: 110) == .none)
        #expect(m.timerFired(now: 15_110) == .sendPing(generation: 1, ping: 1))
        guard case .closeTransport(generation: 1, _, _, _) = m.timerFired(now: 20_110) else {
            Issue.record("an unanswered ping closes generation 1")
            return
        }
        #expect(m.transportEnded(generation: 1, end: .closedLocally, now: 20_120) == .none)
        let retry = m.nextWake ?? 0
        #expect(m.timerFired(now: retry) == .openTransport(generation: 2))
        #expect(m.transportOpened(generation: 1, now: retry + 1) == .none)  // late: generation 1 is gone
        #expect(m.transportOpened(generation: 2, now: retry + 2) == .sendGreeting(generation: 2))
        #expect(m.greetingSent(generation: 1, now: retry + 3) == .none)
        #expect(m.pongReceived(generation: 1, ping: 1, now: retry + 4) == .none)
        #expect(m.phase == .connecting)  // the late events of generation 1 opened nothing
        #expect(m.greetingSent(generation: 2, now: retry + 5) == .none)
        #expect(m.timerFired(now: retry + 15_005) == .sendPing(generation: 2, ping: 2))
        #expect(m.staleEvents == 3)
    }

    @Test func theBackgroundCloseWaitEndsWhenTheCloseIsSentOrAtTheCloseTimeout() {
        var m = self.opened()
        #expect(m.enteredBackground(now: 1_000)
            == .closeTransport(generation: 1, reason: .enteredBackground, code: 1001, reportSent: true))
        #expect(!self.closeWaitEnded(&m))
        #expect(m.nextWake == 3_000)  // the default close timeout, 2 s
        #expect(m.closeSent(generation: 2, now: 1_040) == .none)  // not the close it waits for
        #expect(!self.closeWaitEnded(&m))
        #expect(m.closeSent(generation: 1, now: 1_050) == .none)
        #expect(self.closeWaitEnded(&m))
        #expect(!self.closeWaitEnded(&m))  // once
        #expect(m.nextWake == nil)
        #expect(m.transportEnded(generation: 1, end: .closedLocally, now: 1_060) == .none)
        #expect(!self.closeWaitEnded(&m))  // it ended already

        var late = self.opened()
        _ = late.enteredBackground(now: 1_000)
        #expect(late.timerFired(now: 2_999) == .none)
        #expect(!self.closeWaitEnded(&late))
        #expect(late.timerFired(now: 3_000) == .none)
        #expect(self.closeWaitEnded(&late))

        var back = self.opened()
        _ = back.enteredBackground(now: 1_000)
        #expect(back.enteredForeground(now: 1_500) == .openTransport(generation: 2))
        #expect(self.closeWaitEnded(&back))  // the app is back: nobody waits to be suspended
    }

    @Test func onlyAClosingBackgroundWaitsAndNothingElseEndsAWait() {
        var keeping = Self.noJitter
        keeping.lifecycle = .keepAndProbe
        var kept = self.opened(keeping)
        #expect(kept.enteredBackground(now: 1_000) == .none)  // kept open: nothing to wait for
        #expect(kept.enteredForeground(now: 2_000) != .none)
        #expect(!self.closeWaitEnded(&kept))

        var stopped = self.opened()
        _ = stopped.stop(now: 500)
        #expect(stopped.enteredBackground(now: 1_000) == .none)  // nothing to close
        #expect(stopped.transportEnded(generation: 1, end: .closedLocally, now: 1_001) == .none)
        #expect(!self.closeWaitEnded(&stopped))
    }

    @Test func statusChangesCarryTheirCauseAndARoundTripAloneIsNone() {
        var m = self.machine()
        #expect(m.statusChange() == nil)  // the initial status is the one shown before any event
        _ = m.start(now: 0)
        #expect(m.statusChange()?.status.phase == .connecting)
        _ = m.transportOpened(generation: 1, now: 100)
        #expect(m.statusChange()?.cause == nil)
        _ = m.timerFired(now: 15_100)
        _ = m.pongReceived(generation: 1, ping: 1, now: 15_120)
        #expect(m.statusChange() == nil)  // only the round-trip time changed
        _ = m.transportEnded(generation: 1, end: .peerClosed(code: 1011), now: 16_000)
        let change = m.statusChange()
        #expect(change?.status.phase == .waiting && change?.cause == .peerClosed(code: 1011))
        #expect(change?.status.retryAt != nil && change?.status.lastRTT == 20)
        #expect(change?.status.failure == nil)
    }
}

/// Transcripts of what a driver publishes and how it opens a transport: the machine's answers, not the driver's.
extension SessionMachineTests {
    @Test func eachAcceptedPongsRoundTripIsPublishedOnceAndAnIgnoredPongHasNone() {
        var m = self.opened()
        #expect(m.roundTripToPublish() == nil)
        #expect(m.timerFired(now: 15_100) == .sendPing(generation: 1, ping: 1))
        #expect(m.roundTripToPublish() == nil)  // a ping is no round trip yet
        #expect(m.pongReceived(generation: 1, ping: 1, now: 15_140) == .none)
        #expect(m.roundTripToPublish() == 40)
        #expect(m.roundTripToPublish() == nil)  // once
        #expect(m.pongReceived(generation: 1, ping: 1, now: 15_150) == .none)  // a second completion
        #expect(m.roundTripToPublish() == nil)
        #expect(m.statusChange()?.status.lastRTT == 40)  // carried with the status, no state change of its own
        #expect(m.timerFired(now: 30_140) == .sendPing(generation: 1, ping: 2))
        #expect(m.pongReceived(generation: 1, ping: 2, now: 35_140) == .none)  // at the deadline: late
        #expect(m.roundTripToPublish() == nil)
    }

    @Test func aTransportOpenedWhileTheConsumerIsBehindStartsHeld() {
        var m = self.opened()
        #expect(m.consumerBacklogChanged(held: true, now: 200) == .holdReading(true))
        #expect(m.reconnectRequested(now: 300) == .none)  // open: nothing to retry
        #expect(m.transportEnded(generation: 1, end: .peerClosed(code: 1001), now: 300) == .none)
        #expect(m.timerFired(now: 1_300) == .openTransport(generation: 2, held: true))
        #expect(m.consumerBacklogChanged(held: false, now: 1_400) == .holdReading(false))
        #expect(m.transportEnded(generation: 2, end: .connectFailed(.refused), now: 1_500) == .none)
        #expect(m.reconnectRequested(now: 1_600) == .openTransport(generation: 3, held: false))
    }
}
