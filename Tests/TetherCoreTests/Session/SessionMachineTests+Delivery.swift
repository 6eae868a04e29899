import Testing
import TetherCore

/// Delivery is the machine's decision: everything the latest connection reads before its end is delivered,
/// whatever the phase; a stale generation's leftovers are discarded, counted and recorded.
extension SessionMachineTests {
    @Test func messagesReadWhileSuspendedWithTheTransportKeptAreDelivered() {
        var m = self.opened(Self.keep)
        #expect(m.enteredBackground(now: 1_000) == .none)
        #expect(m.phase == .suspended)
        #expect(m.messageReceived(generation: 1, bytes: 10, now: 2_000) == .deliver)
        #expect(m.messageReceived(generation: 1, bytes: 10, now: 3_000) == .deliver)
        #expect(m.staleEvents == 0)
    }

    @Test func messagesReadDuringTheClosingHandshakeAreDeliveredUntilTheEnd() {
        var m = self.opened()
        #expect(m.enteredBackground(now: 1_000) == .closeTransport(
            generation: 1, reason: .enteredBackground, code: 1001, reportSent: true))
        #expect(m.messageReceived(generation: 1, bytes: 10, now: 1_001) == .deliver)
        #expect(m.transportEnded(generation: 1, end: .closedLocally, now: 1_002) == .none)
        #expect(m.staleEvents == 0)
        #expect(m.messageReceived(generation: 1, bytes: 10, now: 1_003) == .discard)
        #expect(m.staleEvents == 1)
    }

    @Test func messagesReadAfterAStopAreDeliveredUntilTheEnd() {
        var m = self.opened()
        _ = m.stop(now: 500)
        #expect(m.messageReceived(generation: 1, bytes: 10, now: 501) == .deliver)
        #expect(m.phase == .stopped)
    }

    @Test func messagesReadAfterAPongTimeoutAreDeliveredUntilTheNextAttempt() {
        var m = self.opened()
        _ = m.timerFired(now: 15_100)
        #expect(m.timerFired(now: 20_100) == .closeTransport(generation: 1, reason: .pongTimeout, code: 1001))
        #expect(m.messageReceived(generation: 1, bytes: 10, now: 20_200) == .deliver)
        #expect(m.timerFired(now: 21_100) == .openTransport(generation: 2))
        #expect(m.messageReceived(generation: 1, bytes: 10, now: 21_101) == .discard)  // a newer generation exists
        #expect(m.messageReceived(generation: 2, bytes: 10, now: 21_102) == .deliver)  // raced ahead of "opened"
    }

    @Test func aStaleMessageIsDiscardedCountedAndRecorded() {
        var m = self.opened()
        _ = m.transportEnded(generation: 1, end: .receiveFailed, now: 200)
        _ = m.timerFired(now: 1_200)
        _ = m.transportOpened(generation: 2, now: 1_300)
        _ = self.records(&m)
        #expect(m.messageReceived(generation: 1, bytes: 10, now: 1_400) == .discard)
        #expect(m.staleEvents == 1)
        #expect(self.records(&m) == [
            LogRecord(generation: 1, time: 1_400, from: .open, to: .open, event: .stale(ignored: .message)),
        ])
    }

    @Test func everyStaleEventLeavesOneRecordNamingWhatWasIgnored() {
        var m = self.opened()
        let old = m.restartPathMonitor()
        _ = m.restartPathMonitor()
        _ = m.transportEnded(generation: 1, end: .receiveFailed, now: 200)
        _ = m.timerFired(now: 1_200)
        _ = self.records(&m)
        #expect(m.transportOpened(generation: 1, now: 1_300) == .none)
        #expect(m.messageReceived(generation: 1, bytes: 3, now: 1_301) == .discard)
        #expect(m.pongReceived(generation: 1, ping: 1, now: 1_302) == .none)
        #expect(m.pingFailed(generation: 1, ping: 1, now: 1_303) == .none)
        #expect(m.transportEnded(generation: 1, end: .receiveFailed, now: 1_304) == .none)
        #expect(m.pathChanged(monitor: old, state: .unavailable, expensive: false, constrained: false,
                              interfacesChanged: false, now: 1_305) == .none)
        let records = self.records(&m)
        #expect(records.map(\.ignored) == [.opened, .message, .pong, .pingFailed, .ended, .path])
        #expect(records.allSatisfy { $0.kind == .stale && $0.from == .connecting && $0.to == .connecting })
        #expect(records.map(\.generation) == [1, 1, 1, 1, 1, old])
        #expect(m.staleEvents == records.count)
        #expect(m.phase == .connecting && m.generation == 2)
    }
}

/// One connect deadline: the machine's.
extension SessionMachineTests {
    @Test func aTransportsOwnConnectTimeoutHasTheReasonOfTheMachinesDeadline() {
        var m = self.machine()
        _ = m.start(now: 0)
        _ = self.records(&m)
        #expect(m.transportEnded(generation: 1, end: .connectFailed(.timedOut), now: 9_000) == .none)
        let closed = self.records(&m).first { $0.kind == .closed }
        #expect(closed?.reason == .connectTimeout)
        #expect(m.phase == .waiting && m.attempts == 1)

        var deadline = self.machine()
        _ = deadline.start(now: 0)
        #expect(deadline.timerFired(now: 10_000) == .closeTransport(
            generation: 1, reason: .connectTimeout, code: 1001))
        #expect(deadline.attempts == m.attempts && deadline.retryAt == m.retryAt! + 1_000)
    }
}

/// A user's attempt always goes out.
extension SessionMachineTests {
    @Test func reconnectRequestedWhileOfflineAttemptsAtOnceAndAFailureCountsNothing() {
        var m = self.machine()
        let monitor = m.restartPathMonitor()
        _ = m.pathChanged(monitor: monitor, state: .unavailable, expensive: false, constrained: false,
                          interfacesChanged: false, now: 0)
        _ = m.start(now: 0)
        _ = m.transportEnded(generation: 1, end: .connectFailed(.unreachable), now: 10)
        #expect(m.phase == .offline)
        _ = self.records(&m)
        #expect(m.reconnectRequested(now: 100) == .openTransport(generation: 2))
        #expect(self.records(&m).map(\.kind) == [.reconnectRequested, .connecting])
        #expect(m.hint.state == .unavailable)  // the hint still informs
        #expect(m.transportEnded(generation: 2, end: .connectFailed(.unreachable), now: 110) == .none)
        #expect(m.phase == .offline && m.attempts == 0 && m.nextWake == nil)
        // A false "unavailable": the user's attempt opens.
        #expect(m.reconnectRequested(now: 200) == .openTransport(generation: 3))
        #expect(m.transportOpened(generation: 3, now: 210) == .none)
        #expect(m.phase == .open)
    }

    @Test func reconnectRequestedWhileWaitingSkipsTheRestOfTheBackoff() {
        var m = self.machine()
        _ = m.start(now: 0)
        _ = m.transportEnded(generation: 1, end: .receiveFailed, now: 10)
        #expect(m.phase == .waiting && m.retryAt == 1_010 && m.attempts == 1)
        #expect(m.reconnectRequested(now: 20) == .openTransport(generation: 2))
        #expect(m.attempts == 1)
        #expect(m.timerFired(now: 1_010) == .none)  // the scheduled attempt is gone
    }

    @Test func reconnectRequestedAfterAFailureStartsOver() {
        var m = self.machine()
        _ = m.start(now: 0)
        _ = m.transportEnded(generation: 1, end: .handshakeRejected(status: 401, retryAfter: nil), now: 10)
        #expect(m.phase == .failed)
        #expect(m.reconnectRequested(now: 20) == .openTransport(generation: 2))
        #expect(m.failure == nil && m.attempts == 0)
    }

    @Test func reconnectRequestedHasNothingToDoWhileTryingOpenStoppedOrSuspended() {
        var m = self.machine()
        #expect(m.reconnectRequested(now: 0) == .none)
        _ = m.start(now: 0)
        #expect(m.reconnectRequested(now: 1) == .none)
        _ = m.transportOpened(generation: 1, now: 2)
        #expect(m.reconnectRequested(now: 3) == .none)
        _ = m.enteredBackground(now: 4)
        #expect(m.reconnectRequested(now: 5) == .none)
        #expect(m.generation == 1)
    }
}

/// Connectivity: "no network" and "server unreachable" apart, from the path and the request outcomes.
extension SessionMachineTests {
    @Test func connectivityTellsNoNetworkFromServerUnreachable() {
        var m = self.machine()
        let monitor = m.restartPathMonitor()
        #expect(m.connectivity == .unknown)
        _ = m.start(now: 0)
        _ = m.transportEnded(generation: 1, end: .connectFailed(.refused), now: 10)
        #expect(m.connectivity == .serverUnreachable(.unreachable))
        #expect(m.hint.state == .unknown)  // an outcome never rewrites the path
        _ = m.pathChanged(monitor: monitor, state: .unavailable, expensive: false, constrained: false,
                          interfacesChanged: false, now: 20)
        #expect(m.connectivity == .offline)
        #expect(m.lastOutcome == .unreachable)  // a path update never invents an outcome
        _ = m.pathChanged(monitor: monitor, state: .available, expensive: false, constrained: false,
                          interfacesChanged: false, now: 30)
        #expect(m.connectivity == .serverUnreachable(.unreachable))
        _ = m.transportEnded(generation: 2, end: .handshakeRejected(status: 503, retryAfter: nil), now: 40)
        #expect(m.connectivity == .serverUnreachable(.serverError(status: 503)))
        _ = m.timerFired(now: m.retryAt!)
        _ = m.transportOpened(generation: 3, now: 6_000)
        #expect(m.connectivity == .online)
    }

    @Test func anOpenConnectionIsOnlineEvenWhenTheMonitorSaysUnavailable() {
        var m = self.opened()
        let monitor = m.restartPathMonitor()
        _ = m.pathChanged(monitor: monitor, state: .unavailable, expensive: false, constrained: false,
                          interfacesChanged: false, now: 200)
        #expect(m.connectivity == .online)
        _ = m.timerFired(now: 15_100)
        #expect(m.timerFired(now: 20_100) == .closeTransport(generation: 1, reason: .pongTimeout, code: 1001))
        #expect(m.connectivity == .offline)
        #expect(m.lastOutcome == .timeout)
    }

    @Test func requestOutcomesOfTransportEnds() {
        #expect(RequestOutcome(.handshakeRejected(status: 401, retryAfter: nil)) == .authFailure)
        #expect(RequestOutcome(.handshakeRejected(status: 429, retryAfter: 5)) == .rejected(status: 429))
        #expect(RequestOutcome(.handshakeRejected(status: 502, retryAfter: nil)) == .serverError(status: 502))
        #expect(RequestOutcome(.connectFailed(.timedOut)) == .timeout)
        #expect(RequestOutcome(.connectFailed(.nameResolution)) == .unreachable)
        #expect(RequestOutcome(.peerClosed(code: 1012)) == .closedByServer(code: 1012))
        #expect(RequestOutcome(.handshakeInvalid(detail: "x")) == .invalidResponse)
        #expect(RequestOutcome(.receiveFailed) == .connectionLost)
    }
}

/// Retry policy as a value: limits, a hook, a fractional factor.
extension SessionMachineTests {
    func retrying(_ policy: RetryPolicy, backoff: BackoffPolicy = BackoffPolicy(jitterPercent: 0)) -> Machine {
        var configuration = SessionConfiguration(backoff: backoff)
        configuration.retryPolicy = policy
        return self.machine(configuration)
    }

    @Test func afterMaximumAttemptsTheSessionFailsVisibly() {
        var m = self.retrying(RetryPolicy(maximumAttempts: 3))
        _ = m.start(now: 0)
        _ = m.transportEnded(generation: 1, end: .connectFailed(.refused), now: 10)
        #expect(m.timerFired(now: 1_010) == .openTransport(generation: 2))
        _ = m.transportEnded(generation: 2, end: .connectFailed(.refused), now: 1_020)
        #expect(m.timerFired(now: 3_020) == .openTransport(generation: 3))
        _ = self.records(&m)
        _ = m.transportEnded(generation: 3, end: .connectFailed(.refused), now: 3_030)
        #expect(m.phase == .failed && m.failure == .connectFailed(.refused) && m.nextWake == nil)
        #expect(self.records(&m).map(\.kind) == [.closed, .gaveUp])
        #expect(m.reconnectRequested(now: 4_000) == .openTransport(generation: 4))  // the user can still retry
        #expect(m.attempts == 0)
    }

    @Test func afterMaximumElapsedTheNextFailureFailsTheSession() {
        var m = self.retrying(RetryPolicy(maximumElapsed: .milliseconds(2_500)))
        _ = m.start(now: 0)
        _ = m.transportEnded(generation: 1, end: .receiveFailed, now: 100)  // the run starts at 100
        _ = m.timerFired(now: 1_100)
        _ = m.transportEnded(generation: 2, end: .receiveFailed, now: 1_200)
        #expect(m.phase == .waiting)
        _ = m.timerFired(now: 3_200)
        _ = m.transportEnded(generation: 3, end: .receiveFailed, now: 3_300)
        #expect(m.phase == .failed)
    }

    @Test func theHookSeesAttemptElapsedAndFailureAndDecides() {
        let policy = RetryPolicy { context in
            if context.failure == .peerClosed(code: 4001) { return .stop }  // the app's own close code
            return .retry(after: .milliseconds(context.attempt * 100) + context.elapsed)
        }
        var m = self.retrying(policy)
        _ = m.start(now: 0)
        _ = m.transportEnded(generation: 1, end: .receiveFailed, now: 50)
        #expect(m.retryAt == 50 + 100)
        _ = m.timerFired(now: 150)
        _ = m.transportEnded(generation: 2, end: .receiveFailed, now: 250)
        #expect(m.retryAt == 250 + 200 + 200)
        _ = m.timerFired(now: 650)
        _ = m.transportOpened(generation: 3, now: 660)
        _ = m.transportEnded(generation: 3, end: .peerClosed(code: 4001), now: 700)
        #expect(m.phase == .failed && m.failure == .peerClosed(code: 4001))
    }

    @Test func aFractionalFactorGrowsByOneAndAHalf() {
        var m = self.machine(SessionConfiguration(backoff: BackoffPolicy(base: .seconds(1), factorPercent: 150,
                                                                         jitterPercent: 0)))
        _ = m.start(now: 0)
        var delays: [Int] = []
        for generation in 1...4 {
            _ = m.transportEnded(generation: generation, end: .receiveFailed, now: m.generation * 100_000)
            delays.append(m.retryAt! - m.generation * 100_000)
            _ = m.timerFired(now: m.retryAt!)
        }
        #expect(delays == [1_000, 1_500, 2_250, 3_375])
        #expect(BackoffPolicy(factorPercent: 99).fieldOutOfRange?.setting == "factorPercent")
        #expect(BackoffPolicy(factor: 3).factorPercent == 300)
    }
}
