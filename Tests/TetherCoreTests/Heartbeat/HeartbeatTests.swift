import Testing
import TetherCore

@Suite struct HeartbeatTests {
    /// Opened at `now`, pinged one interval later: returns the heartbeat with the ping outstanding.
    private func pinged(interval: Int = 100, timeout: Int = 1000, openedAt: Int = 0) -> (Heartbeat, Int) {
        var h = Heartbeat(interval: interval, timeout: timeout)
        let generation = h.connect()
        h.opened(generation, now: openedAt)
        #expect(h.tick(now: openedAt + interval) == .ping(generation))
        return (h, generation)
    }

    /// Ticks every millisecond over `range` and returns all actions.
    private func actions(_ h: inout Heartbeat, over range: ClosedRange<Int>) -> [Heartbeat.Action] {
        range.compactMap { h.tick(now: $0) }
    }

    @Test func openedTwiceDoesNotRestartTheInterval() {
        var h = Heartbeat(interval: 100, timeout: 1000)
        let generation = h.connect()
        h.opened(generation, now: 0)
        h.opened(generation, now: 50)
        #expect(h.nextWake == 100)
        #expect(h.tick(now: 100) == .ping(generation))
    }

    @Test func pongWhileIdleOrConnectingChangesNothing() {
        var h = Heartbeat(interval: 100, timeout: 1000)
        let idle = h
        h.pong(0, now: 10)
        #expect(h == idle)
        let generation = h.connect()
        let connecting = h
        h.pong(generation, now: 20)
        #expect(h.pong(generation, ping: 0, now: 20) == nil)
        #expect(h == connecting)
        #expect(h.phase == .connecting)
    }

    @Test func repeatedTicksAfterTimeoutYieldExactlyOneClose() {
        var (h, generation) = self.pinged()
        #expect(self.actions(&h, over: 101...3000) == [.close(generation)])
        #expect(h.phase == .idle)
        #expect(h.nextWake == nil)
    }

    @Test func pongExactlyAtTheDeadlineIsLate() {
        var (h, generation) = self.pinged()
        #expect(h.pongDeadline == 1100)
        #expect(h.pong(generation, ping: h.lastPingID, now: 1100) == nil)
        #expect(self.actions(&h, over: 1100...1200) == [.close(generation)])
    }

    @Test func pongOneMillisecondBeforeTheDeadlineCounts() {
        var (h, generation) = self.pinged()
        #expect(h.pong(generation, ping: h.lastPingID, now: 1099) == 999)
        #expect(h.nextWake == 1199)
        #expect(self.actions(&h, over: 1099...1198).isEmpty)
    }

    @Test func oldGenerationPongDuringNewWaitYieldsOneCloseForTheNew() {
        var (h, first) = self.pinged()
        #expect(self.actions(&h, over: 1100...1100) == [.close(first)])
        let second = h.connect()
        h.opened(second, now: 2000)
        #expect(h.tick(now: 2100) == .ping(second))
        h.pong(first, now: 2150)
        #expect(h.pong(first, ping: h.lastPingID, now: 2160) == nil)
        #expect(self.actions(&h, over: 2101...4000) == [.close(second)])
    }

    @Test func staleOpenedLeavesTheNewConnectionConnecting() {
        var h = Heartbeat(interval: 100, timeout: 1000)
        let first = h.connect()
        let second = h.connect()
        h.opened(first, now: 0)
        #expect(h.phase == .connecting)
        #expect(h.nextWake == nil)
        h.opened(second, now: 5)
        #expect(h.nextWake == 105)
    }

    @Test func nextWakeFollowsIntervalThenDeadlineThenNothing() {
        var h = Heartbeat(interval: 100, timeout: 1000)
        #expect(h.nextWake == nil)
        let generation = h.connect()
        #expect(h.nextWake == nil)
        h.opened(generation, now: 7)
        #expect(h.nextWake == 107)
        #expect(h.tick(now: 106) == nil)
        #expect(h.tick(now: 107) == .ping(generation))
        #expect(h.nextWake == 1107)
        h.pong(generation, now: 300)
        #expect(h.nextWake == 400)
        #expect(h.tick(now: 400) == .ping(generation))
        #expect(h.tick(now: 1400) == .close(generation))
        #expect(h.nextWake == nil)
    }

    @Test func nextWakeIsTheFirstTimeTickActs() {
        var (h, _) = self.pinged(interval: 37, timeout: 11)
        for _ in 0..<20 {
            let wake = h.nextWake!
            let before = h
            #expect(h.tick(now: wake - 1) == nil)
            #expect(h == before)
            guard h.tick(now: wake) != nil else {
                Issue.record("tick did nothing at nextWake")
                return
            }
            if h.phase == .idle { break }
            h.pong(h.generation, now: wake + 3)
        }
    }

    @Test func secondCompletionOfTheSamePingIsIgnored() {
        var (h, generation) = self.pinged()
        let ping = h.lastPingID
        #expect(h.pong(generation, ping: ping, now: 150) == 50)
        let answered = h
        #expect(h.pong(generation, ping: ping, now: 160) == nil)
        #expect(h == answered)
        #expect(h.nextWake == 250)
    }

    @Test func pongForAnOlderPingIdIsIgnored() {
        var (h, generation) = self.pinged()
        let firstPing = h.lastPingID
        #expect(h.pong(generation, ping: firstPing, now: 150) != nil)
        #expect(h.tick(now: 250) == .ping(generation))
        #expect(h.lastPingID == firstPing + 1)
        #expect(h.pong(generation, ping: firstPing, now: 260) == nil)
        #expect(h.pongDeadline == 1250)
        #expect(h.pong(generation, ping: firstPing + 1, now: 270) == 20)
    }

    @Test func pingIdsKeepIncreasingAcrossGenerations() {
        var (h, _) = self.pinged()
        let firstPing = h.lastPingID
        _ = h.tick(now: 1100)
        let second = h.connect()
        h.opened(second, now: 2000)
        #expect(h.tick(now: 2100) == .ping(second))
        #expect(h.lastPingID == firstPing + 1)
    }

    @Test func probeSendsAPingAtOnceWithItsShortDeadline() {
        var h = Heartbeat(interval: 100, timeout: 1000)
        let generation = h.connect()
        h.opened(generation, now: 0)
        #expect(h.probe(now: 30, timeout: 20) == .ping(generation))
        #expect(h.probing)
        #expect(h.nextWake == 50)
        #expect(h.tick(now: 49) == nil)
        #expect(h.tick(now: 50) == .close(generation))
    }

    @Test func probeDuringAnOutstandingPingPullsItsDeadlineIn() {
        var (h, generation) = self.pinged()
        let ping = h.lastPingID
        #expect(h.probe(now: 200, timeout: 20) == nil)
        #expect(h.lastPingID == ping)
        #expect(h.pongDeadline == 220)
        #expect(h.probe(now: 210, timeout: 500) == nil)
        #expect(h.pongDeadline == 220)
        #expect(h.pong(generation, ping: ping, now: 219) == 119)
        #expect(!h.probing)
    }

    @Test func probeWhenNotOpenDoesNothing() {
        var h = Heartbeat(interval: 100, timeout: 1000)
        #expect(h.probe(now: 0, timeout: 10) == nil)
        _ = h.connect()
        #expect(h.probe(now: 0, timeout: 10) == nil)
    }

    @Test func pauseAbandonsTheOutstandingPingUntilAProbe() {
        var (h, generation) = self.pinged()
        let ping = h.lastPingID
        h.pause()
        #expect(h.nextWake == nil)
        #expect(h.tick(now: 5000) == nil)
        #expect(h.pong(generation, ping: ping, now: 150) == nil)
        #expect(h.probe(now: 6000, timeout: 20) == .ping(generation))
        #expect(h.lastPingID == ping + 1)
        #expect(h.pong(generation, ping: ping + 1, now: 6005) == 5)
    }
}

// Reading held by the owner (its consumer is behind): the pong may sit unread, so no deadline runs.
extension HeartbeatTests {
    @Test func whileReadingIsHeldNoPingGoesOutAndNoDeadlineRuns() {
        var (h, generation) = self.pinged(interval: 100, timeout: 1000)  // ping at 100, due before 1100
        h.holdReading()
        #expect(h.nextWake == nil)
        #expect(self.actions(&h, over: 100...5_000).isEmpty)
        h.resumeReading(now: 5_000)
        // The outstanding ping gets a full timeout from the resume: its pong is still welcome at 5,999.
        #expect(h.nextWake == 6_000)
        #expect(h.pong(generation, ping: h.lastPingID, now: 5_999) == 5_899)
    }

    @Test func afterTheHoldTheOutstandingPingTimesOutOnceAFullTimeoutLater() {
        var (h, generation) = self.pinged(interval: 100, timeout: 1000)
        h.holdReading()
        h.resumeReading(now: 300)  // the pong may have been waiting unread: it gets 1,000 ms from now
        #expect(h.nextWake == 1_300)
        #expect(self.actions(&h, over: 300...3_000) == [.close(generation)])
    }

    @Test func aPingThatFellDueWhileHeldGoesOutAtTheNextTick() {
        var h = Heartbeat(interval: 100, timeout: 1000)
        h.holdReading()  // held before the connection opens: it holds across generations
        let generation = h.connect()
        h.opened(generation, now: 0)
        #expect(h.tick(now: 500) == nil)
        h.resumeReading(now: 500)
        #expect(h.tick(now: 500) == .ping(generation))
    }
}
