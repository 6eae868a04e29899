import Testing
import TetherCore

/// The app's background as every phase meets it: stopped and failed sessions remember it, a started one is
/// suspended (with its transport kept, or none), and the foreground picks up where the background left off.
extension SessionMachineTests {
    func pathChanged(_ m: inout Machine, monitor: Int, _ state: PathState, now: Int) -> SessionAction {
        m.pathChanged(monitor: monitor, state: state, expensive: false, constrained: false, interfacesChanged: false,
                      now: now)
    }

    @Test func backgroundWhileStoppedThenStartSuspendsAndTheForegroundConnects() {
        var m = self.machine()
        #expect(m.enteredBackground(now: 0) == .none)
        #expect(m.phase == .stopped && m.inBackground)
        #expect(m.enteredBackground(now: 5) == .none)  // repeated: no second record
        #expect(m.start(now: 10) == .none)
        #expect(m.phase == .suspended && m.nextWake == nil)
        #expect(m.start(now: 11) == .none)  // already started
        #expect(m.reconnectRequested(now: 12) == .none)  // the foreground decides
        #expect(m.timerFired(now: 50_000) == .none)
        #expect(m.enteredForeground(now: 20) == .openTransport(generation: 1))
        #expect(m.phase == .connecting && !m.inBackground)
        #expect(m.nextWake == 10_020)
        #expect(m.enteredForeground(now: 21) == .none)
        #expect(self.records(&m) == [
            LogRecord(generation: 0, time: 0, from: .stopped, to: .stopped, event: .background),
            LogRecord(generation: 0, time: 10, from: .stopped, to: .suspended, event: .background),
            LogRecord(generation: 0, time: 20, from: .suspended, to: .suspended, event: .foreground),
            LogRecord(generation: 1, time: 20, from: .suspended, to: .connecting, event: .connecting(attempt: 0)),
        ])
    }

    @Test func stoppedThroughABackgroundAndBackStaysStopped() {
        var m = self.machine()
        _ = m.enteredBackground(now: 0)
        #expect(m.enteredForeground(now: 10) == .none)
        #expect(m.phase == .stopped && !m.inBackground)
        #expect(self.records(&m).map(\.kind) == [.background, .foreground])
        #expect(m.start(now: 20) == .openTransport(generation: 1))  // in the foreground again: at once
    }

    @Test func failedInTheBackgroundStaysFailedOnForeground() {
        var m = self.opened(Self.keep)
        #expect(m.enteredBackground(now: 1_000) == .none)
        #expect(m.transportEnded(generation: 1, end: .peerClosed(code: 1008), now: 2_000) == .none)
        #expect(m.phase == .failed && m.inBackground)
        #expect(m.failure == .peerClosed(code: 1008))
        #expect(m.reconnectRequested(now: 2_500) == .none)  // in the background: the foreground decides
        #expect(m.enteredBackground(now: 2_600) == .none)
        _ = self.records(&m)
        #expect(m.enteredForeground(now: 3_000) == .none)
        #expect(m.phase == .failed && !m.inBackground)
        #expect(m.failure == .peerClosed(code: 1008))
        #expect(m.nextWake == nil)
        #expect(m.reconnectRequested(now: 4_000) == .openTransport(generation: 2))
        #expect(m.failure == nil && m.attempts == 0)
        #expect(self.records(&m) == [
            LogRecord(generation: 1, time: 3_000, from: .failed, to: .failed, event: .foreground),
            LogRecord(generation: 1, time: 4_000, from: .failed, to: .failed, event: .reconnectRequested),
            LogRecord(generation: 2, time: 4_000, from: .failed, to: .connecting, event: .connecting(attempt: 0)),
        ])
    }

    @Test func failedThenStartedInTheBackgroundIsSuspendedUntilTheForeground() {
        var m = self.machine()
        _ = m.start(now: 0)
        _ = m.transportEnded(generation: 1, end: .connectFailed(.unsupported), now: 10)
        #expect(m.enteredBackground(now: 20) == .none)
        #expect(m.phase == .failed && m.inBackground)
        #expect(m.start(now: 30) == .none)
        #expect(m.phase == .suspended && m.failure == nil)
        #expect(m.enteredForeground(now: 40) == .openTransport(generation: 2))
    }

    @Test func stopWhileSuspendedWithAKeptTransportClosesIt() {
        var m = self.opened(Self.keep)
        _ = m.enteredBackground(now: 1_000)
        _ = self.records(&m)
        #expect(m.stop(now: 2_000) == .closeTransport(generation: 1, reason: .userStopped, code: 1000))
        #expect(m.phase == .stopped && m.inBackground)
        #expect(self.records(&m) == [
            LogRecord(generation: 1, time: 2_000, from: .suspended, to: .stopped, event: .closed(reason: .userStopped, code: 1000)),
            LogRecord(generation: 1, time: 2_000, from: .suspended, to: .stopped, event: .stopped),
        ])
        #expect(m.stop(now: 2_001) == .none)  // no second close
        #expect(m.pongReceived(generation: 1, ping: 1, now: 2_002) == .none)  // no longer live: stale
        #expect(m.staleEvents == 1)
        #expect(m.messageReceived(generation: 1, bytes: 10, now: 2_003) == .deliver)  // until its end
        #expect(m.transportEnded(generation: 1, end: .closedLocally, now: 2_004) == .none)
        #expect(m.staleEvents == 1)  // the end of the close the machine ordered is expected
        #expect(m.messageReceived(generation: 1, bytes: 10, now: 2_005) == .discard)
        #expect(m.enteredForeground(now: 3_000) == .none)
        #expect(m.phase == .stopped && !m.inBackground)
        #expect(m.start(now: 4_000) == .openTransport(generation: 2))
    }

    @Test func stopWhileSuspendedAfterTheBackgroundClosedTheTransportClosesNothingMore() {
        var m = self.opened()
        #expect(m.enteredBackground(now: 1_000) == .closeTransport(
            generation: 1, reason: .enteredBackground, code: 1001, reportSent: true))
        #expect(m.stop(now: 1_100) == .none)  // its close is already ordered
        #expect(m.phase == .stopped)
        #expect(m.messageReceived(generation: 1, bytes: 10, now: 1_200) == .deliver)  // still until its end
        #expect(m.transportEnded(generation: 1, end: .closedLocally, now: 1_300) == .none)
        #expect(m.staleEvents == 0)
    }

    @Test func backgroundThenForegroundWithThePathUnavailableGoesOfflineUntilItReturns() {
        var m = self.opened()
        let monitor = m.restartPathMonitor()
        #expect(m.enteredBackground(now: 1_000) == .closeTransport(
            generation: 1, reason: .enteredBackground, code: 1001, reportSent: true))
        #expect(self.pathChanged(&m, monitor: monitor, .unavailable, now: 1_100) == .none)
        #expect(m.phase == .suspended)
        _ = self.records(&m)
        #expect(m.enteredForeground(now: 2_000) == .none)
        #expect(m.phase == .offline && !m.inBackground)
        #expect(m.nextWake == nil && m.attempts == 0)
        #expect(self.records(&m) == [
            LogRecord(generation: 1, time: 2_000, from: .suspended, to: .offline, event: .foreground),
        ])
        // The transport closed on entering the background ends late: expected, not stale.
        #expect(m.messageReceived(generation: 1, bytes: 10, now: 2_100) == .deliver)
        #expect(m.transportEnded(generation: 1, end: .closedLocally, now: 2_200) == .none)
        #expect(m.staleEvents == 0)
        #expect(m.phase == .offline)
        #expect(self.pathChanged(&m, monitor: monitor, .available, now: 3_000) == .openTransport(generation: 2))
    }

    @Test func aKeptTransportIsProbedOnForegroundWhateverThePathSays() {
        var m = self.opened(Self.keep)
        let monitor = m.restartPathMonitor()
        _ = m.enteredBackground(now: 1_000)
        _ = self.pathChanged(&m, monitor: monitor, .unavailable, now: 1_100)
        #expect(m.enteredForeground(now: 2_000) == .sendPing(generation: 1, ping: 1))
        #expect(m.phase == .open)
        #expect(m.connectivity == .online)  // the open transport proved the path monitor wrong
    }

    @Test func aKeptTransportEndingInTheBackgroundWithThePathUnavailableGoesOfflineOnForeground() {
        var m = self.opened(Self.keep)
        let monitor = m.restartPathMonitor()
        _ = m.enteredBackground(now: 1_000)
        _ = self.pathChanged(&m, monitor: monitor, .unavailable, now: 1_100)
        #expect(m.transportEnded(generation: 1, end: .receiveFailed, now: 1_200) == .none)
        #expect(m.phase == .suspended && m.attempts == 0)  // reconnect on foreground, none counted
        #expect(m.enteredForeground(now: 2_000) == .none)
        #expect(m.phase == .offline)
        #expect(m.generation == 1)
    }

    @Test func aKeptTransportKeepsItsOpeningTimeThroughTheBackground() {
        var m = self.machine(Self.keep)
        _ = m.start(now: 0)
        _ = m.transportEnded(generation: 1, end: .receiveFailed, now: 10)
        #expect(m.timerFired(now: 1_010) == .openTransport(generation: 2))
        _ = m.transportOpened(generation: 2, now: 1_100)
        #expect(m.attempts == 1)  // not reset on open
        _ = m.enteredBackground(now: 2_000)
        #expect(m.enteredForeground(now: 31_000) == .sendPing(generation: 2, ping: 1))
        // Open since 1_100, the time suspended included: at 31_100 it lasted the stable period and proved healthy.
        #expect(m.transportEnded(generation: 2, end: .peerClosed(code: 1011), now: 31_100) == .none)
        #expect(m.attempts == 1)  // reset, then this failure counted
        #expect(m.retryAt == 32_100)
    }
}
