import Testing
import TetherCore

/// A session whose driver makes each attempt's request with a provider: what the provider is told, and a 401 or 403
/// as a stale credential to refresh once before it is a failure.
extension SessionMachineTests {
    static var providing: SessionConfiguration {
        var configuration = Self.noJitter
        configuration.providesRequests = true
        return configuration
    }

    @Test func aRejectedCredentialAsksForAFreshRequestAtOnceWithoutCountingAnAttempt() {
        var m = self.machine(Self.providing)
        #expect(m.start(now: 0) == .openTransport(generation: 1))
        #expect(m.lastEnd == nil)  // the first attempt since start: nothing ended before it
        _ = self.records(&m)
        #expect(m.transportEnded(generation: 1, end: .handshakeRejected(status: 401, retryAfter: nil), now: 30)
            == .openTransport(generation: 2))
        #expect(m.phase == .connecting && m.attempts == 0 && m.nextWake == 30 + 10_000)
        #expect(m.lastEnd == .handshakeRejected(status: 401))
        let records = self.records(&m)
        #expect(records.map(\.kind) == [.closed, .connecting])
        #expect(records[0].generation == 1 && records[0].reason == .handshakeRejected(status: 401))
        #expect(records[0].code == 401)
        #expect(records[1].generation == 2 && records[1].from == .connecting && records[1].to == .connecting)
        // The fresh request works: open, as any attempt.
        #expect(m.transportOpened(generation: 2, now: 50) == .none)
        #expect(m.phase == .open && m.generation == 2)
    }

    @Test func aSecondRefusalInARowFailsTheSessionAsWithoutAProvider() {
        var m = self.machine(Self.providing)
        _ = m.start(now: 0)
        #expect(m.transportEnded(generation: 1, end: .handshakeRejected(status: 403, retryAfter: nil), now: 10)
            == .openTransport(generation: 2))
        #expect(m.transportEnded(generation: 2, end: .handshakeRejected(status: 401, retryAfter: nil), now: 20)
            == .none)
        #expect(m.phase == .failed && m.failure == .handshakeRejected(status: 401) && m.nextWake == nil)
        // The user starts again: a fresh run, whose first refusal asks again.
        #expect(m.start(now: 30) == .openTransport(generation: 3))
        #expect(m.lastEnd == nil)
        #expect(m.transportEnded(generation: 3, end: .handshakeRejected(status: 401, retryAfter: nil), now: 40)
            == .openTransport(generation: 4))
    }

    @Test func eachAttemptMayAskAgainOnceSoATokenThatExpiresLaterIsRefreshedToo() throws {
        var m = self.machine(Self.providing)
        _ = m.start(now: 0)
        _ = m.transportEnded(generation: 1, end: .handshakeRejected(status: 401, retryAfter: nil), now: 10)
        #expect(m.transportOpened(generation: 2, now: 20) == .none)
        // Open for a while, then the server closes; the next attempt's token has expired meanwhile.
        #expect(m.transportEnded(generation: 2, end: .peerClosed(code: 1001), now: 40_000) == .none)
        #expect(m.phase == .waiting && m.lastEnd == .peerClosed(code: 1001))
        #expect(m.timerFired(now: try #require(m.retryAt)) == .openTransport(generation: 3))
        #expect(m.transportEnded(generation: 3, end: .handshakeRejected(status: 401, retryAfter: nil), now: 41_100)
            == .openTransport(generation: 4))
        #expect(m.transportOpened(generation: 4, now: 41_200) == .none)
        #expect(m.phase == .open)
    }

    @Test func withoutAProviderARefusedCredentialFailsTheSession() {
        var m = self.machine()
        _ = m.start(now: 0)
        #expect(m.transportEnded(generation: 1, end: .handshakeRejected(status: 401, retryAfter: nil), now: 10)
            == .none)
        #expect(m.phase == .failed && m.failure == .handshakeRejected(status: 401))
    }

    @Test func otherStatusesAndEndsAreNotAStaleCredential() {
        for end: TransportEnd in [
            .handshakeRejected(status: 404, retryAfter: nil), .handshakeRejected(status: 503, retryAfter: nil),
            .proxyRejected(status: 407, retryAfter: nil), .connectFailed(.refused), .peerClosed(code: 1008),
        ] {
            var reference = self.machine()
            _ = reference.start(now: 0)
            var m = self.machine(Self.providing)
            _ = m.start(now: 0)
            #expect(m.transportEnded(generation: 1, end: end, now: 10)
                == reference.transportEnded(generation: 1, end: end, now: 10), "\(end)")
            #expect(m.phase == reference.phase && m.generation == 1, "\(end)")
        }
    }

    @Test func aFailedRequestIsRetriedWithBackoffAndNamedForTheNextAttempt() {
        var m = self.machine(Self.providing)
        _ = m.start(now: 0)
        let end = TransportEnd.requestFailed(detail: "the provider threw AuthError")
        #expect(m.transportEnded(generation: 1, end: end, now: 5) == .none)
        #expect(m.phase == .waiting && m.attempts == 1 && m.retryAt == 5 + 1_000)
        #expect(m.lastEnd == .requestFailed(detail: "the provider threw AuthError"))
        let closed = self.records(&m).first { $0.kind == .closed }
        #expect(closed?.reason?.name == "request_failed" && closed?.reason?.detail == "the provider threw AuthError")
        #expect(m.lastOutcome == .authFailure)
    }

    @Test func theRetryPolicySeesAFailedRequestAndMayStop() {
        var configuration = Self.providing
        configuration.retryPolicy = RetryPolicy { context in
            if case .requestFailed = context.failure { return .stop }  // the app's user signed out: stop
            return nil
        }
        var m = self.machine(configuration)
        _ = m.start(now: 0)
        _ = m.transportEnded(generation: 1, end: .requestFailed(detail: "the provider threw SignedOut"), now: 5)
        #expect(m.phase == .failed && m.failure == .requestFailed(detail: "the provider threw SignedOut"))
    }

    @Test func theLastEndIsThatOfTheSessionsLatestConnectionOrAttempt() throws {
        var m = self.machine(Self.providing)
        _ = m.start(now: 0)
        #expect(m.timerFired(now: 10_000) == .closeTransport(generation: 1, reason: .connectTimeout, code: 1001))
        #expect(m.lastEnd == .connectTimeout)
        _ = m.transportEnded(generation: 1, end: .closedLocally, now: 10_010)
        #expect(m.lastEnd == .connectTimeout)  // the end of a close the machine ordered names nothing new
        _ = m.timerFired(now: try #require(m.retryAt))
        _ = m.transportOpened(generation: 2, now: 12_000)
        _ = m.stop(now: 13_000)
        #expect(m.lastEnd == .userStopped)
        _ = m.start(now: 14_000)
        #expect(m.lastEnd == nil)
    }
}
