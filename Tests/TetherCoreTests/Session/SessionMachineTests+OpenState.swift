import Testing
import TetherCore

/// Transcripts of the heartbeat as part of the open connection: each connection brings its own, the ping ids and
/// the consumer's backlog are the session's, and a closing transport is what the session has left of the last one.
extension SessionMachineTests {
    @Test func eachConnectionBringsItsOwnHeartbeatWhilePingIDsKeepRising() {
        var m = self.opened()
        #expect(m.timerFired(now: 15_100) == .sendPing(generation: 1, ping: 1))
        #expect(m.timerFired(now: 20_100) == .closeTransport(generation: 1, reason: .pongTimeout, code: 1001))
        #expect(m.retryAt == 21_100)
        #expect(m.timerFired(now: 21_100) == .openTransport(generation: 2))
        #expect(m.nextWake == 31_100)  // the connect deadline: no heartbeat runs while connecting
        #expect(m.transportOpened(generation: 2, now: 21_200) == .none)
        #expect(m.nextWake == 36_200)  // a whole interval from this open, nothing left of the first connection's
        #expect(m.pongReceived(generation: 1, ping: 1, now: 21_300) == .none)  // the first connection's: stale
        #expect(m.staleEvents == 1)
        #expect(m.timerFired(now: 36_200) == .sendPing(generation: 2, ping: 2))
        #expect(m.pongReceived(generation: 2, ping: 1, now: 36_210) == .none)  // an id of the first connection
        #expect(m.lastRTT == nil)
        #expect(m.pongReceived(generation: 2, ping: 2, now: 36_250) == .none)
        #expect(m.lastRTT == 50)
    }

    @Test func aConnectionOpenedWhileTheConsumerIsBehindPingsOnlyOnceItCaughtUp() {
        var m = self.machine()
        #expect(m.start(now: 0) == .openTransport(generation: 1))
        #expect(m.consumerBacklogChanged(held: true, now: 50) == .holdReading(true))
        #expect(m.readingHeld)  // the driver opens the transport held
        #expect(m.transportOpened(generation: 1, now: 100) == .none)
        #expect(m.nextWake == nil)
        #expect(m.timerFired(now: 40_000) == .none)
        #expect(m.consumerBacklogChanged(held: false, now: 40_000) == .holdReading(false))
        #expect(m.nextWake == 15_100)  // the ping fell due meanwhile: it goes out at once
        #expect(m.timerFired(now: 40_000) == .sendPing(generation: 1, ping: 1))
        #expect(m.nextWake == 45_000)
    }

    @Test func aKeptConnectionKeepsItsHealthAndRejoinsWithAFreshProbe() {
        var configuration = Self.noJitter
        configuration.lifecycle = .keepAndProbe
        var m = self.opened(configuration)
        #expect(m.timerFired(now: 15_100) == .sendPing(generation: 1, ping: 1))
        #expect(m.enteredBackground(now: 15_200) == .none)  // the outstanding ping is abandoned
        #expect(m.phase == .suspended)
        #expect(m.nextWake == nil)
        #expect(m.pongReceived(generation: 1, ping: 1, now: 15_300) == .none)  // its pong counts for nothing
        #expect(m.lastRTT == nil)
        #expect(m.enteredForeground(now: 90_000) == .sendPing(generation: 1, ping: 2))
        #expect(m.nextWake == 92_000)  // the probe's deadline, not the abandoned ping's
        #expect(m.pongReceived(generation: 1, ping: 2, now: 90_040) == .none)
        #expect(m.lastRTT == 40)
        #expect(m.nextWake == 105_040)
    }

    @Test func theClosingTransportStaysTheSessionsThroughStopAndStartUntilANewOneOpens() {
        var m = self.opened()
        #expect(m.enteredBackground(now: 200) == .closeTransport(generation: 1, reason: .enteredBackground, code: 1001))
        #expect(m.stop(now: 300) == .none)
        #expect(m.phase == .stopped)
        #expect(m.messageReceived(generation: 1, bytes: 2, now: 310) == .deliver)  // still closing: delivered
        #expect(m.enteredForeground(now: 400) == .none)
        #expect(m.messageReceived(generation: 1, bytes: 2, now: 410) == .deliver)
        #expect(m.start(now: 500) == .openTransport(generation: 2))
        #expect(m.messageReceived(generation: 1, bytes: 2, now: 510) == .discard)  // a new one is live
        #expect(m.transportEnded(generation: 1, end: .closedLocally, now: 520) == .none)
        #expect(m.staleEvents == 2)
        #expect(m.phase == .connecting)
    }
}
