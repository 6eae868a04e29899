import Testing
import TetherCore

/// Transcripts of the session machine: one event per line, the action it must return next to it.
@Suite struct SessionMachineTests {
    typealias Machine = SessionMachine

    static let noJitter = SessionConfiguration(backoff: BackoffPolicy(jitterPercent: 0))
    static let recordingMessages = SessionConfiguration(backoff: BackoffPolicy(jitterPercent: 0), recordsMessages: true)

    func machine(_ configuration: SessionConfiguration = Self.noJitter) -> Machine {
        Machine(configuration: configuration, random: SplitMix64(seed: 1))
    }

    /// Started and opened at `openedAt` (generation 1).
    func opened(_ configuration: SessionConfiguration = Self.noJitter, openedAt: Int = 100) -> Machine {
        var m = self.machine(configuration)
        #expect(m.start(now: 0) == .openTransport(generation: 1))
        #expect(m.transportOpened(generation: 1, now: openedAt) == .none)
        return m
    }

    func records(_ m: inout Machine) -> [LogRecord] {
        var records: [LogRecord] = []
        m.drainRecords { records.append($0) }
        return records
    }

    // MARK: - Heartbeat inside the session

    @Test func startOpensGenerationOneWithAConnectDeadline() {
        var m = self.machine()
        #expect(m.phase == .stopped)
        #expect(m.nextWake == nil)
        #expect(m.start(now: 0) == .openTransport(generation: 1))
        #expect(m.phase == .connecting)
        #expect(m.generation == 1)
        #expect(m.nextWake == 10_000)
        #expect(m.start(now: 5) == .none)
    }

    @Test func pingAfterOneIntervalAndPongRecordsTheRoundTrip() {
        var m = self.opened()
        #expect(m.phase == .open)
        #expect(m.nextWake == 15_100)
        #expect(m.timerFired(now: 15_099) == .none)
        #expect(m.timerFired(now: 15_100) == .sendPing(generation: 1, ping: 1))
        #expect(m.nextWake == 20_100)
        #expect(m.timerFired(now: 15_200) == .none)
        #expect(m.pongReceived(generation: 1, ping: 1, now: 15_140) == .none)
        #expect(m.lastRTT == 40)
        #expect(m.nextWake == 30_140)
        #expect(m.timerFired(now: 30_140) == .sendPing(generation: 1, ping: 2))
    }

    @Test func withoutHeartbeatRecordsAPingCycleLeavesNoRecordButItsRoundTripAndAMissedPongStillCloses() {
        var configuration = Self.noJitter
        configuration.recordsHeartbeats = false
        var m = self.opened(configuration)
        _ = self.records(&m)  // the open
        #expect(m.timerFired(now: 15_100) == .sendPing(generation: 1, ping: 1))
        #expect(m.pongReceived(generation: 1, ping: 1, now: 15_140) == .none)
        #expect(self.records(&m).isEmpty)
        #expect(m.roundTripToPublish() == 40)
        #expect(m.timerFired(now: 30_140) == .sendPing(generation: 1, ping: 2))
        #expect(m.timerFired(now: 35_140) == .closeTransport(generation: 1, reason: .pongTimeout, code: 1001))
        #expect(self.records(&m).map(\.kind) == [.closed, .retryScheduled])

        // The default records both.
        var recording = self.opened()
        _ = self.records(&recording)
        _ = recording.timerFired(now: 15_100)
        _ = recording.pongReceived(generation: 1, ping: 1, now: 15_140)
        #expect(self.records(&recording).map(\.kind) == [.ping, .pong])
    }

    @Test func pongTimeoutClosesOnceThenBacksOff() {
        var m = self.opened()
        #expect(m.timerFired(now: 15_100) == .sendPing(generation: 1, ping: 1))
        #expect(m.timerFired(now: 20_100) == .closeTransport(generation: 1, reason: .pongTimeout, code: 1001))
        #expect(m.phase == .waiting)
        #expect(m.attempts == 1)
        #expect(m.retryAt == 21_100)
        #expect(m.timerFired(now: 20_100) == .none)
        #expect(m.transportEnded(generation: 1, end: .closedLocally, now: 20_150) == .none)
        #expect(m.staleEvents == 0)  // the end of the close the machine ordered is expected
        #expect(m.timerFired(now: 21_100) == .openTransport(generation: 2))
    }

    @Test func pongExactlyAtTheDeadlineIsLate() {
        var m = self.opened()
        _ = m.timerFired(now: 15_100)
        #expect(m.pongReceived(generation: 1, ping: 1, now: 20_100) == .none)
        #expect(m.lastRTT == nil)
        #expect(m.timerFired(now: 20_100) == .closeTransport(generation: 1, reason: .pongTimeout, code: 1001))
    }

    @Test func aMessageIsNotAPongAndExtendsNothing() {
        var m = self.opened()
        _ = m.timerFired(now: 15_100)
        #expect(m.messageReceived(generation: 1, bytes: 300, now: 16_000) == .deliver)
        #expect(m.nextWake == 20_100)
        #expect(m.timerFired(now: 20_100) == .closeTransport(generation: 1, reason: .pongTimeout, code: 1001))
    }

    @Test func secondCompletionOfAPingIsHarmless() {
        var m = self.opened()
        _ = m.timerFired(now: 15_100)
        #expect(m.pongReceived(generation: 1, ping: 1, now: 15_120) == .none)
        let answered = m.lastRTT
        #expect(m.pongReceived(generation: 1, ping: 1, now: 15_130) == .none)
        #expect(m.pingFailed(generation: 1, ping: 1, now: 15_140) == .none)
        #expect(m.lastRTT == answered)
        #expect(m.phase == .open)
        #expect(m.nextWake == 30_120)
    }

    @Test func pingFailureOfTheOutstandingPingClosesWithItsReason() {
        var m = self.opened()
        _ = m.timerFired(now: 15_100)
        #expect(m.pingFailed(generation: 1, ping: 1, now: 15_101) == .closeTransport(
            generation: 1, reason: .pingFailed, code: 1001))
        #expect(m.phase == .waiting)
        #expect(m.attempts == 1)
    }

    // MARK: - Generations

    @Test func lateCloseFromOldGenerationDoesNotCancelNewTask() {
        var m = self.opened()
        _ = m.timerFired(now: 15_100)
        _ = m.timerFired(now: 20_100)
        #expect(m.timerFired(now: 21_100) == .openTransport(generation: 2))
        #expect(m.transportOpened(generation: 2, now: 21_200) == .none)
        #expect(m.transportEnded(generation: 1, end: .receiveFailed, now: 21_300) == .none)
        #expect(m.transportOpened(generation: 1, now: 21_300) == .none)
        #expect(m.phase == .open)
        #expect(m.generation == 2)
        #expect(m.staleEvents == 2)
    }

    @Test func oldGenerationPongDuringTheNewWaitDoesNotExtendIt() {
        var m = self.opened()
        _ = m.timerFired(now: 15_100)
        _ = m.timerFired(now: 20_100)
        _ = m.timerFired(now: 21_100)
        _ = m.transportOpened(generation: 2, now: 21_200)
        #expect(m.timerFired(now: 36_200) == .sendPing(generation: 2, ping: 2))
        #expect(m.pongReceived(generation: 1, ping: 2, now: 36_300) == .none)
        #expect(m.pongReceived(generation: 1, ping: 1, now: 36_300) == .none)
        #expect(m.staleEvents == 2)
        #expect(m.timerFired(now: 41_200) == .closeTransport(generation: 2, reason: .pongTimeout, code: 1001))
    }

    @Test func duplicateOpenedIsIgnored() {
        var m = self.opened(openedAt: 100)
        #expect(m.transportOpened(generation: 1, now: 5_000) == .none)
        #expect(m.nextWake == 15_100)
    }

    // MARK: - Connect deadline and backoff

    @Test func connectingLongerThanTheConnectTimeoutCloses() {
        var m = self.machine()
        _ = m.start(now: 0)
        #expect(m.timerFired(now: 9_999) == .none)
        #expect(m.timerFired(now: 10_000) == .closeTransport(generation: 1, reason: .connectTimeout, code: 1001))
        #expect(m.phase == .waiting)
        #expect(m.retryAt == 11_000)
        #expect(m.transportOpened(generation: 1, now: 10_001) == .none)
        #expect(m.phase == .waiting)
    }

    @Test func aServerThatAcceptsAndClosesAtOnceBacksOffExponentially() {
        var m = self.machine()
        var now = 0
        #expect(m.start(now: now) == .openTransport(generation: 1))
        var retries: [Int] = []
        for generation in 1...5 {
            _ = m.transportOpened(generation: generation, now: now + 10)
            _ = m.transportEnded(generation: generation, end: .peerClosed(code: 1000), now: now + 20)
            retries.append(m.retryAt! - (now + 20))
            now = m.retryAt!
            #expect(m.timerFired(now: now) == .openTransport(generation: generation + 1))
        }
        #expect(retries == [1_000, 2_000, 4_000, 8_000, 16_000])
        #expect(m.attempts == 5)
    }

    @Test func attemptsResetOnTheFirstPongNotOnOpen() {
        var m = self.machine()
        _ = m.start(now: 0)
        _ = m.transportEnded(generation: 1, end: .connectFailed(.refused), now: 10)
        _ = m.timerFired(now: 1_010)
        _ = m.transportEnded(generation: 2, end: .receiveFailed, now: 1_020)
        #expect(m.attempts == 2)
        _ = m.timerFired(now: 3_020)
        _ = m.transportOpened(generation: 3, now: 3_030)
        #expect(m.attempts == 2)
        #expect(m.timerFired(now: 18_030) == .sendPing(generation: 3, ping: 1))
        _ = m.pongReceived(generation: 3, ping: 1, now: 18_040)
        #expect(m.attempts == 0)
        _ = m.transportEnded(generation: 3, end: .receiveFailed, now: 18_050)
        #expect(m.retryAt == 19_050)
    }

    @Test func aConnectionOpenForTheStablePeriodResetsAttempts() {
        let configuration = SessionConfiguration(
            heartbeatInterval: .seconds(60), stablePeriod: .seconds(30), backoff: BackoffPolicy(jitterPercent: 0))
        var m = self.machine(configuration)
        _ = m.start(now: 0)
        _ = m.transportEnded(generation: 1, end: .receiveFailed, now: 10)
        _ = m.timerFired(now: 1_010)
        _ = m.transportOpened(generation: 2, now: 1_020)
        _ = m.transportEnded(generation: 2, end: .receiveFailed, now: 31_019)
        #expect(m.attempts == 2)
        _ = m.timerFired(now: m.retryAt!)
        _ = m.transportOpened(generation: 3, now: 40_000)
        _ = m.transportEnded(generation: 3, end: .receiveFailed, now: 70_000)
        #expect(m.attempts == 1)
        #expect(m.retryAt == 71_000)
    }

    // MARK: - Retry decisions

    static let permanent: [TransportEnd] = [
        .peerClosed(code: 1008), .peerClosed(code: 1003),
        .handshakeRejected(status: 400, retryAfter: nil), .handshakeRejected(status: 401, retryAfter: nil),
        .handshakeRejected(status: 403, retryAfter: nil), .handshakeRejected(status: 404, retryAfter: 1_000),
        .handshakeRejected(status: 301, retryAfter: nil), .connectFailed(.unsupported),
        .tlsFailed(detail: "hostname mismatch", permanent: true), .tlsFailed(detail: "pin mismatch", permanent: true),
        // What a SOCKS proxy will refuse again, as an HTTP proxy's 407, 403, 405 and 400.
        .socksRejected(.noAcceptableMethod), .socksRejected(.authenticationFailed),
        .socksRejected(.notAllowedByRuleset), .socksRejected(.commandNotSupported),
        .socksRejected(.addressTypeNotSupported),
        // A redirect that cannot be followed: the server answers the next attempt the same way.
        .redirectFailed(.tooMany(limit: 5), status: 302), .redirectFailed(.loop, status: 301),
        .redirectFailed(.downgrade, status: 308), .redirectFailed(.invalidLocation("no host"), status: 307),
        .redirectFailed(.unsupported("the proxy for the new host differs from the first URL's"), status: 303),
    ]

    @Test(arguments: Self.permanent)
    func nonRetryableEndsFailVisibly(end: TransportEnd) {
        var m = self.opened()
        #expect(m.transportEnded(generation: 1, end: end, now: 200) == .none)
        #expect(m.phase == .failed)
        #expect(m.failure == CloseReason(end))
        #expect(m.nextWake == nil)
        #expect(m.timerFired(now: 1_000_000) == .none)
        #expect(m.start(now: 1_000_001) == .openTransport(generation: 2))
        #expect(m.failure == nil)
        #expect(m.attempts == 0)
    }

    static let retryable: [TransportEnd] = [
        .peerClosed(code: 1000), .peerClosed(code: 1001), .peerClosed(code: 1011), .peerClosed(code: nil),
        .connectFailed(.refused), .connectFailed(.timedOut), .connectFailed(.reset), .connectFailed(.system(104)),
        .handshakeRejected(status: 500, retryAfter: nil), .handshakeRejected(status: 408, retryAfter: nil),
        .handshakeInvalid(detail: "Sec-WebSocket-Accept does not match the key"), .protocolViolation(code: 1002),
        .receiveFailed, .closedLocally, .tlsFailed(detail: "handshake failed: unexpected eof", permanent: false),
        .connectFailed(.refused, tried: [ConnectAttempt(address: "127.0.0.1:1", failure: .refused)]),
        // The origin unreachable from a SOCKS proxy, as an HTTP proxy's 502 and 504.
        .socksRejected(.generalFailure), .socksRejected(.networkUnreachable), .socksRejected(.hostUnreachable),
        .socksRejected(.connectionRefused), .socksRejected(.ttlExpired), .socksRejected(.unassigned(0x2A)),
    ]

    @Test(arguments: Self.retryable)
    func retryableEndsWaitWithBackoff(end: TransportEnd) {
        var m = self.opened()
        #expect(m.transportEnded(generation: 1, end: end, now: 200) == .none)
        #expect(m.phase == .waiting)
        #expect(m.retryAt == 1_200)
        #expect(m.nextWake == 1_200)
        #expect(m.attempts == 1)
    }

    static let throttled: [TransportEnd] = [
        .peerClosed(code: 1012), .peerClosed(code: 1013),
        .handshakeRejected(status: 429, retryAfter: nil), .handshakeRejected(status: 503, retryAfter: nil),
    ]

    @Test(arguments: Self.throttled)
    func serverAskingForPatienceWaitsAtLeastTheThrottleDelay(end: TransportEnd) {
        var m = self.opened()
        _ = m.transportEnded(generation: 1, end: end, now: 200)
        #expect(m.phase == .waiting)
        #expect(m.retryAt == 5_200)
    }

    @Test func retryAfterIsHonouredEvenAboveTheCap() {
        var m = self.machine()
        _ = m.start(now: 0)
        _ = m.transportEnded(generation: 1, end: .handshakeRejected(status: 503, retryAfter: 120_000), now: 50)
        #expect(m.retryAt == 120_050)
        _ = m.timerFired(now: 120_050)
        _ = m.transportEnded(generation: 2, end: .handshakeRejected(status: 429, retryAfter: 10), now: 120_060)
        // A short Retry-After never undercuts the backoff (attempt 2: 2 s).
        #expect(m.retryAt == 122_060)
    }

    @Test func aHugeRetryAfterIsCutToTheConfiguredMaximum() {
        var m = self.machine()
        #expect(m.configuration.maximumRetryAfter == .seconds(300))  // the default: 5 minutes
        _ = m.start(now: 0)
        _ = self.records(&m)
        // `Retry-After: 999999999` (31.7 years), in ms.
        let thirtyYears = TransportEnd.handshakeRejected(status: 503, retryAfter: 999_999_999_000)
        _ = m.transportEnded(generation: 1, end: thirtyYears, now: 50)
        #expect(m.retryAt == 300_050)
        #expect(m.nextWake == 300_050)
        #expect(self.records(&m) == [
            LogRecord(generation: 1, time: 50, from: .connecting, to: .waiting, event: .closed(reason: .handshakeRejected(status: 503), code: 503)),
            LogRecord(generation: 1, time: 50, from: .waiting, to: .waiting, event: .retryScheduled(attempt: 1, delay: 300_000)),
        ])
        #expect(m.timerFired(now: 300_049) == .none)
        #expect(m.timerFired(now: 300_050) == .openTransport(generation: 2))
        // Saturated by the transport (a value beyond Int.max seconds): the same cap, no overflow.
        _ = m.transportEnded(generation: 2, end: .handshakeRejected(status: 429, retryAfter: Int.max), now: 300_060)
        #expect(m.retryAt == 600_060)
    }

    @Test func aLongNumericRetryAfterIsCappedNotIgnored() {
        var configuration = Self.noJitter
        configuration.maximumRetryAfter = .seconds(45)
        var m = self.machine(configuration)
        _ = m.start(now: 0)
        // `Retry-After: 9999999999` (ten digits): capped at 45 s, not replaced by the 5 s throttle delay.
        let tenDigits = TransportEnd.handshakeRejected(status: 503, retryAfter: 9_999_999_999_000)
        _ = m.transportEnded(generation: 1, end: tenDigits, now: 10)
        #expect(m.retryAt == 45_010)
        // Below the cap it is honoured as given, even above the backoff cap.
        configuration.backoff.cap = .seconds(1)
        m = self.machine(configuration)
        _ = m.start(now: 0)
        _ = m.transportEnded(generation: 1, end: .handshakeRejected(status: 503, retryAfter: 30_000), now: 10)
        #expect(m.retryAt == 30_010)
    }

    @Test func aZeroMaximumLeavesOnlyTheBackoff() {
        var configuration = Self.noJitter
        configuration.maximumRetryAfter = .zero
        var m = self.machine(configuration)
        _ = m.start(now: 0)
        _ = m.transportEnded(generation: 1, end: .handshakeRejected(status: 503, retryAfter: 120_000), now: 10)
        #expect(m.retryAt == 1_010)
    }

    @Test func aMaximumNearIntMaxSaturatesTheRetryTimeInsteadOfTrapping() {
        var configuration = Self.noJitter
        configuration.maximumRetryAfter = .seconds(Int64.max)  // saturates at Int.max ms
        var m = self.machine(configuration)
        _ = m.start(now: 0)
        _ = m.transportEnded(generation: 1, end: .handshakeRejected(status: 503, retryAfter: .max), now: 10)
        #expect(m.phase == .waiting)
        #expect(m.retryAt == .max)
        #expect(m.timerFired(now: 1_000_000) == .none)
        #expect(m.stop(now: 1_000_001) == .none)
    }

    @Test func anInvalidHandshakeCarriesItsDetailIntoTheCloseRecord() {
        var m = self.machine()
        _ = m.start(now: 0)
        _ = self.records(&m)
        let end = TransportEnd.handshakeInvalid(detail: "extension not offered")
        #expect(m.transportEnded(generation: 1, end: end, now: 30) == .none)
        let closed = self.records(&m).first { $0.kind == .closed }
        #expect(closed?.reason == .handshakeInvalid(detail: "extension not offered"))
        #expect(closed?.reason?.name == "handshake_invalid")
        #expect(closed?.reason?.detail == "extension not offered")
        #expect(closed?.code == nil)
        #expect(m.phase == .waiting)  // retried with backoff, like any broken attempt
        #expect(CloseReason.pongTimeout.detail == nil)
        #expect(CloseReason.handshakeRejected(status: 401).detail == nil)
    }

    @Test func aTLSFailureIsRecordedAsTLSFailedWithItsDetailAndNoCode() {
        var m = self.machine()
        _ = m.start(now: 0)
        _ = self.records(&m)
        let end = TransportEnd.tlsFailed(detail: "certificate expired", permanent: true)
        #expect(m.transportEnded(generation: 1, end: end, now: 30) == .none)
        let closed = self.records(&m).first { $0.kind == .closed }
        #expect(closed?.reason == .tlsFailed(detail: "certificate expired"))
        #expect(closed?.reason?.name == "tls_failed")
        #expect(closed?.reason?.detail == "certificate expired")
        #expect(closed?.code == nil)
        #expect(m.phase == .failed)
        #expect(m.failure == .tlsFailed(detail: "certificate expired"))
    }

    // MARK: - Path

    @Test func unavailablePathMakesNoAttemptAndCountsNone() {
        var m = self.machine()
        let monitor = m.restartPathMonitor()
        #expect(m.pathChanged(monitor: monitor, state: .unavailable, expensive: false, constrained: false,
                              interfacesChanged: false, now: 0) == .none)
        // The user's start is a real attempt whatever the hint says; its failure is not counted.
        #expect(m.start(now: 10) == .openTransport(generation: 1))
        #expect(m.transportEnded(generation: 1, end: .connectFailed(.unreachable), now: 20) == .none)
        #expect(m.phase == .offline)
        #expect(m.nextWake == nil)
        #expect(m.attempts == 0)
        #expect(m.pathChanged(monitor: monitor, state: .available, expensive: false, constrained: false,
                              interfacesChanged: false, now: 500) == .openTransport(generation: 2))
    }

    @Test func unknownPathNeverBlocks() {
        var m = self.machine()
        _ = m.restartPathMonitor()
        #expect(m.hint.state == .unknown)
        #expect(m.start(now: 0) == .openTransport(generation: 1))
    }

    @Test func transportEndingWhileThePathIsUnavailableGoesOfflineWithoutCounting() {
        var m = self.opened()
        let monitor = m.restartPathMonitor()
        #expect(m.pathChanged(monitor: monitor, state: .unavailable, expensive: false, constrained: false,
                              interfacesChanged: false, now: 1_000) == .none)
        #expect(m.phase == .open)
        #expect(m.transportEnded(generation: 1, end: .receiveFailed, now: 1_100) == .none)
        #expect(m.phase == .offline)
        #expect(m.attempts == 0)
        #expect(m.nextWake == nil)
    }

    @Test func pathReturningWhileWaitingConnectsAtOnceWithAttemptsReset() {
        var m = self.machine()
        let monitor = m.restartPathMonitor()
        _ = m.start(now: 0)
        _ = m.transportEnded(generation: 1, end: .receiveFailed, now: 10)
        _ = m.timerFired(now: 1_010)
        _ = m.transportEnded(generation: 2, end: .receiveFailed, now: 1_020)
        #expect(m.attempts == 2)
        #expect(m.pathChanged(monitor: monitor, state: .unavailable, expensive: false, constrained: false,
                              interfacesChanged: false, now: 1_500) == .none)
        #expect(m.phase == .offline)
        #expect(m.retryAt == nil)
        #expect(m.pathChanged(monitor: monitor, state: .needsConnection, expensive: false, constrained: false,
                              interfacesChanged: false, now: 9_000) == .openTransport(generation: 3))
        #expect(m.attempts == 0)
    }

    @Test func pathComingBackWhileOpenProbesAndAFailedProbeReconnectsAtOnce() {
        var m = self.opened()
        let monitor = m.restartPathMonitor()
        _ = m.pathChanged(monitor: monitor, state: .unavailable, expensive: false, constrained: false,
                          interfacesChanged: false, now: 1_000)
        #expect(m.pathChanged(monitor: monitor, state: .available, expensive: false, constrained: false,
                              interfacesChanged: false, now: 3_000) == .sendPing(generation: 1, ping: 1))
        #expect(m.nextWake == 5_000)
        #expect(m.timerFired(now: 5_000) == .closeTransport(generation: 1, reason: .probeTimeout, code: 1001))
        #expect(m.phase == .waiting)
        #expect(m.nextWake == 5_000)
        #expect(m.attempts == 0)
        #expect(m.timerFired(now: 5_000) == .openTransport(generation: 2))
    }

    @Test func interfaceChangeWhileOpenProbesAndAnAnsweredProbeKeepsTheConnection() {
        var m = self.opened()
        let monitor = m.restartPathMonitor()
        _ = m.pathChanged(monitor: monitor, state: .available, expensive: false, constrained: false,
                          interfacesChanged: false, now: 500)
        #expect(m.pathChanged(monitor: monitor, state: .available, expensive: true, constrained: false,
                              interfacesChanged: true, now: 1_000) == .sendPing(generation: 1, ping: 1))
        #expect(m.pongReceived(generation: 1, ping: 1, now: 1_080) == .none)
        #expect(m.phase == .open)
        #expect(m.lastRTT == 80)
        #expect(m.nextWake == 16_080)
    }

    @Test func probeDuringAnOutstandingPingPullsItsDeadlineIn() {
        var m = self.opened()
        let monitor = m.restartPathMonitor()
        #expect(m.timerFired(now: 15_100) == .sendPing(generation: 1, ping: 1))
        #expect(m.pathChanged(monitor: monitor, state: .available, expensive: false, constrained: false,
                              interfacesChanged: true, now: 15_200) == .none)
        #expect(m.nextWake == 17_200)
        #expect(m.timerFired(now: 17_200) == .closeTransport(generation: 1, reason: .probeTimeout, code: 1001))
    }

    @Test func aFailedProbePingReconnectsAtOnceWithoutCountingAnAttempt() {
        var m = self.opened()
        let monitor = m.restartPathMonitor()
        #expect(m.pathChanged(monitor: monitor, state: .available, expensive: false, constrained: false,
                              interfacesChanged: true, now: 1_000) == .sendPing(generation: 1, ping: 1))
        #expect(m.pingFailed(generation: 1, ping: 1, now: 1_001) == .closeTransport(
            generation: 1, reason: .pingFailed, code: 1001))
        #expect(m.attempts == 0)
        #expect(m.nextWake == 1_001)
        #expect(m.timerFired(now: 1_001) == .openTransport(generation: 2))
    }

    @Test func pathEventFromACancelledMonitorChangesNothing() {
        var m = self.machine()
        let old = m.restartPathMonitor()
        _ = m.restartPathMonitor()
        _ = m.start(now: 0)
        #expect(m.pathChanged(monitor: old, state: .unavailable, expensive: true, constrained: true,
                              interfacesChanged: true, now: 10) == .none)
        #expect(m.hint.state == .unknown)
        #expect(m.staleEvents == 1)
    }

    @Test func theSamePathEventTwiceDoesNoExtraWork() {
        var m = self.machine()
        let monitor = m.restartPathMonitor()
        _ = m.pathChanged(monitor: monitor, state: .unavailable, expensive: false, constrained: false,
                          interfacesChanged: false, now: 0)
        _ = m.start(now: 0)
        _ = m.transportEnded(generation: 1, end: .connectFailed(.unreachable), now: 5)
        #expect(m.pathChanged(monitor: monitor, state: .available, expensive: false, constrained: false,
                              interfacesChanged: false, now: 10) == .openTransport(generation: 2))
        _ = self.records(&m)
        #expect(m.pathChanged(monitor: monitor, state: .available, expensive: false, constrained: false,
                              interfacesChanged: false, now: 20) == .none)
        #expect(self.records(&m).isEmpty)
        #expect(m.generation == 2)
    }

    // MARK: - Lifecycle

    @Test func backgroundClosesWithGoingAwayAndForegroundReconnects() {
        var m = self.opened()
        #expect(m.enteredBackground(now: 1_000) == .closeTransport(
            generation: 1, reason: .enteredBackground, code: 1001, reportSent: true))
        #expect(m.phase == .suspended)
        #expect(m.nextWake == 3_000)  // only the close wait's deadline (`closeTimeout`)
        #expect(m.enteredBackground(now: 1_001) == .none)
        #expect(m.transportEnded(generation: 1, end: .closedLocally, now: 1_002) == .none)
        #expect(self.closeWaitEnded(&m))  // ended: nothing left to wait for
        #expect(m.nextWake == nil)
        #expect(m.staleEvents == 0)
        #expect(m.enteredForeground(now: 90_000) == .openTransport(generation: 2))
        #expect(m.enteredForeground(now: 90_001) == .none)
    }

    @Test func foregroundWithThePathUnavailableGoesOffline() {
        var m = self.machine()
        let monitor = m.restartPathMonitor()
        _ = m.start(now: 0)
        _ = m.enteredBackground(now: 10)
        _ = m.pathChanged(monitor: monitor, state: .unavailable, expensive: false, constrained: false,
                          interfacesChanged: false, now: 20)
        #expect(m.phase == .suspended)
        #expect(m.enteredForeground(now: 30) == .none)
        #expect(m.phase == .offline)
    }

    @Test func waitingInTheBackgroundHoldsNoTimer() {
        var m = self.machine()
        _ = m.start(now: 0)
        _ = m.transportEnded(generation: 1, end: .receiveFailed, now: 10)
        #expect(m.enteredBackground(now: 20) == .none)
        #expect(m.nextWake == nil)
        #expect(m.timerFired(now: 5_000) == .none)
        #expect(m.enteredForeground(now: 6_000) == .openTransport(generation: 2))
        #expect(m.attempts == 0)
    }

    @Test func startInTheBackgroundWaitsForTheForeground() {
        var m = self.machine()
        #expect(m.enteredBackground(now: 0) == .none)
        #expect(m.start(now: 10) == .none)
        #expect(m.phase == .suspended)
        #expect(m.nextWake == nil)
        #expect(m.enteredForeground(now: 20) == .openTransport(generation: 1))
    }

    static let keep = SessionConfiguration(backoff: BackoffPolicy(jitterPercent: 0), lifecycle: .keepAndProbe)

    @Test func keepAndProbeKeepsTheTransportAndProbesOnForeground() {
        var m = self.opened(Self.keep)
        #expect(m.timerFired(now: 15_100) == .sendPing(generation: 1, ping: 1))
        #expect(m.enteredBackground(now: 15_200) == .none)
        #expect(m.phase == .suspended)
        #expect(m.nextWake == nil)
        #expect(m.pongReceived(generation: 1, ping: 1, now: 15_300) == .none)
        #expect(m.enteredForeground(now: 100_000) == .sendPing(generation: 1, ping: 2))
        #expect(m.phase == .open)
        #expect(m.nextWake == 102_000)
        #expect(m.pongReceived(generation: 1, ping: 2, now: 100_050) == .none)
        #expect(m.phase == .open)
        #expect(m.generation == 1)
    }

    @Test func keepAndProbeReconnectsAtOnceWhenTheForegroundProbeFails() {
        var m = self.opened(Self.keep)
        _ = m.enteredBackground(now: 1_000)
        #expect(m.enteredForeground(now: 100_000) == .sendPing(generation: 1, ping: 1))
        #expect(m.timerFired(now: 102_000) == .closeTransport(generation: 1, reason: .probeTimeout, code: 1001))
        #expect(m.nextWake == 102_000)
        #expect(m.timerFired(now: 102_000) == .openTransport(generation: 2))
    }

    @Test func keepAndProbeTransportEndingInTheBackgroundReconnectsOnForeground() {
        var m = self.opened(Self.keep)
        _ = m.enteredBackground(now: 1_000)
        #expect(m.transportEnded(generation: 1, end: .receiveFailed, now: 2_000) == .none)
        #expect(m.phase == .suspended)
        #expect(m.nextWake == nil)
        #expect(m.enteredForeground(now: 3_000) == .openTransport(generation: 2))
    }

    @Test func keepAndProbeStillClosesAConnectionAttemptOnBackground() {
        var m = self.machine(Self.keep)
        _ = m.start(now: 0)
        #expect(m.enteredBackground(now: 10) == .closeTransport(
            generation: 1, reason: .enteredBackground, code: 1001, reportSent: true))
    }

    // MARK: - Stop

    @Test func stopClosesWithNormalClosureAndLaterEventsAreStale() {
        var m = self.opened()
        #expect(m.stop(now: 500) == .closeTransport(generation: 1, reason: .userStopped, code: 1000))
        #expect(m.phase == .stopped)
        #expect(m.nextWake == nil)
        #expect(m.stop(now: 501) == .none)
        #expect(m.transportEnded(generation: 1, end: .closedLocally, now: 502) == .none)
        #expect(m.messageReceived(generation: 1, bytes: 10, now: 503) == .discard)  // after its end
        #expect(m.pongReceived(generation: 1, ping: 1, now: 504) == .none)
        #expect(m.staleEvents == 2)
        #expect(m.start(now: 600) == .openTransport(generation: 2))
    }

    @Test func stopWhileWaitingHasNothingToClose() {
        var m = self.machine()
        _ = m.start(now: 0)
        _ = m.transportEnded(generation: 1, end: .receiveFailed, now: 10)
        #expect(m.stop(now: 20) == .none)
        #expect(m.retryAt == nil)
        #expect(m.timerFired(now: 5_000) == .none)
    }

    // MARK: - Log records

    @Test func recordsTellTheWholeStoryWithoutPayloads() {
        var m = self.opened(Self.recordingMessages)
        #expect(m.messageReceived(generation: 1, bytes: 42, now: 200) == .deliver)
        _ = m.timerFired(now: 15_100)
        _ = m.pongReceived(generation: 1, ping: 1, now: 15_130)
        _ = m.transportEnded(generation: 1, end: .peerClosed(code: 1011), now: 16_000)
        _ = m.enteredBackground(now: 16_100)
        _ = m.enteredForeground(now: 16_200)
        _ = m.stop(now: 16_300)
        let expected: [LogRecord] = [
            LogRecord(generation: 1, time: 0, from: .stopped, to: .connecting, event: .connecting(attempt: 0)),
            LogRecord(generation: 1, time: 100, from: .connecting, to: .open, event: .opened),
            LogRecord(generation: 1, time: 200, from: .open, to: .open, event: .message(bytes: 42)),
            LogRecord(generation: 1, time: 15_100, from: .open, to: .open, event: .ping),
            LogRecord(generation: 1, time: 15_130, from: .open, to: .open, event: .pong(rtt: 30)),
            LogRecord(generation: 1, time: 16_000, from: .open, to: .waiting, event: .closed(reason: .peerClosed(code: 1011), code: 1011)),
            LogRecord(generation: 1, time: 16_000, from: .waiting, to: .waiting, event: .retryScheduled(attempt: 1, delay: 1_000)),
            LogRecord(generation: 1, time: 16_100, from: .waiting, to: .suspended, event: .background),
            LogRecord(generation: 1, time: 16_200, from: .suspended, to: .suspended, event: .foreground),
            LogRecord(generation: 2, time: 16_200, from: .suspended, to: .connecting, event: .connecting(attempt: 0)),
            LogRecord(generation: 2, time: 16_300, from: .connecting, to: .stopped, event: .closed(reason: .userStopped, code: 1000)),
            LogRecord(generation: 2, time: 16_300, from: .connecting, to: .stopped, event: .stopped),
        ]
        let records = self.records(&m)
        #expect(records == expected)
        #expect(self.records(&m).isEmpty)
        #expect(m.droppedRecords == 0)
    }

    @Test func messagesLeaveNoRecordUnlessAskedTo() {
        var m = self.opened()
        _ = self.records(&m)
        #expect(m.messageReceived(generation: 1, bytes: 42, now: 200) == .deliver)
        #expect(self.records(&m).isEmpty)
        #expect(m.phase == .open && m.nextWake == 15_100)

        var recording = self.opened(Self.recordingMessages)
        _ = self.records(&recording)
        #expect(recording.messageReceived(generation: 1, bytes: 42, now: 200) == .deliver)
        #expect(self.records(&recording) == [
            LogRecord(generation: 1, time: 200, from: .open, to: .open, event: .message(bytes: 42)),
        ])
    }

    @Test func handshakeRejectionRecordsTheStatusAsCode() {
        var m = self.machine()
        _ = m.start(now: 0)
        _ = self.records(&m)
        _ = m.transportEnded(generation: 1, end: .handshakeRejected(status: 401, retryAfter: nil), now: 40)
        #expect(self.records(&m) == [
            LogRecord(generation: 1, time: 40, from: .connecting, to: .failed, event: .closed(reason: .handshakeRejected(status: 401), code: 401)),
        ])
    }

    @Test func pathRecordsCarryTheState() {
        var m = self.machine()
        let monitor = m.restartPathMonitor()
        _ = m.pathChanged(monitor: monitor, state: .needsConnection, expensive: false, constrained: false,
                          interfacesChanged: false, now: 5)
        #expect(self.records(&m) == [
            LogRecord(generation: 0, time: 5, from: .stopped, to: .stopped, event: .path(.needsConnection)),
        ])
    }

    @Test func undrainedRecordsDropTheOldestAndCountThem() {
        var m = Machine(configuration: Self.recordingMessages, random: SplitMix64(seed: 1), recordCapacity: 2)
        _ = m.start(now: 0)
        _ = m.transportOpened(generation: 1, now: 1)
        #expect(m.messageReceived(generation: 1, bytes: 5, now: 2) == .deliver)
        #expect(m.droppedRecords == 1)
        #expect(self.records(&m).map(\.kind) == [.opened, .message])
    }

    @Test func aSOCKSRefusalIsRecordedAsProxyRejectedWithADetailNamingSOCKSAndTheReply() {
        let details: [(SOCKSRefusal, String)] = [
            (.noAcceptableMethod, "SOCKS no acceptable authentication method"),
            (.authenticationFailed, "SOCKS authentication failed"), (.generalFailure, "SOCKS general failure"),
            (.notAllowedByRuleset, "SOCKS connection not allowed by ruleset"),
            (.networkUnreachable, "SOCKS network unreachable"), (.hostUnreachable, "SOCKS host unreachable"),
            (.connectionRefused, "SOCKS connection refused"), (.ttlExpired, "SOCKS TTL expired"),
            (.commandNotSupported, "SOCKS command not supported"),
            (.addressTypeNotSupported, "SOCKS address type not supported"), (.unassigned(42), "SOCKS reply 42"),
        ]
        for (refusal, detail) in details {
            var m = self.machine()
            _ = m.start(now: 0)
            _ = m.transportEnded(generation: 1, end: .socksRejected(refusal), now: 50)
            let closed = self.records(&m).first { $0.kind == .closed }
            #expect(closed?.reason == .socksRejected(refusal))
            #expect(closed?.reason?.name == "proxy_rejected")
            #expect(closed?.reason?.detail == detail)
            #expect(closed?.code == nil)  // the record's code is a close code or an HTTP status, neither here
        }
        #expect((1...8).map { SOCKSRefusal(reply: $0) } == [
            .generalFailure, .notAllowedByRuleset, .networkUnreachable, .hostUnreachable, .connectionRefused,
            .ttlExpired, .commandNotSupported, .addressTypeNotSupported,
        ])
        #expect(SOCKSRefusal(reply: 0x09) == .unassigned(0x09))
    }

    @Test func aFailedConnectIsRecordedWithEveryAddressItTried() {
        var m = self.machine()
        _ = m.start(now: 0)
        let tried = [
            ConnectAttempt(address: "[::1]:9", failure: .refused),
            ConnectAttempt(address: "127.0.0.1:9", failure: .refused),
        ]
        _ = m.transportEnded(generation: 1, end: .connectFailed(.refused, tried: tried), now: 50)
        let closed = self.records(&m).first { $0.kind == .closed }
        #expect(closed?.reason == .connectFailed(.refused, tried: tried))
        #expect(closed?.reason?.name == "connect_failed")
        #expect(closed?.reason?.detail == "tried [::1]:9: refused, 127.0.0.1:9: refused")
        // A failure before any address (the name did not resolve) has nothing to list.
        #expect(CloseReason(.connectFailed(.nameResolution)).detail == nil)
        #expect(CloseReason(.proxyUnreachable(.refused, tried: [tried[1]])).detail == "tried 127.0.0.1:9: refused")
    }

    @Test func closeReasonNamesAreStableSnakeCase() {
        let names: [(CloseReason, String)] = [
            (.pongTimeout, "pong_timeout"), (.pingFailed, "ping_failed"), (.probeTimeout, "probe_timeout"),
            (.connectTimeout, "connect_timeout"), (.receiveFailed, "receive_failed"),
            (.peerClosed(code: 1000), "peer_closed"), (.connectFailed(.refused), "connect_failed"),
            (.handshakeRejected(status: 403), "handshake_rejected"), (.proxyRejected(status: 407), "proxy_rejected"),
            (.socksRejected(.hostUnreachable), "proxy_rejected"), (.proxyUnreachable(.refused), "proxy_unreachable"),
            (.handshakeInvalid(detail: "extension not offered"), "handshake_invalid"),
            (.protocolViolation(code: 1002), "protocol_violation"), (.userStopped, "user_stopped"),
            (.enteredBackground, "entered_background"),
        ]
        for (reason, name) in names {
            #expect(reason.name == name)
        }
        #expect(LogRecord.Kind.retryScheduled.rawValue == "retry_scheduled")
    }
}
