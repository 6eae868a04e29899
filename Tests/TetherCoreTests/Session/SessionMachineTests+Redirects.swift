import Testing
import TetherCore

/// Redirects of the opening handshake, as the machine sees them: each hop a transport followed is a record of the
/// attempt (nothing else changes: the hops share its connect deadline), and a redirect that could not be followed
/// stops the session, whatever the retry policy's limits.
extension SessionMachineTests {
    @Test func eachHopIsARecordOfTheAttemptAndTheConnectDeadlineStays() {
        var m = self.machine()
        #expect(m.start(now: 0) == .openTransport(generation: 1))
        _ = self.records(&m)
        m.transportRedirected(generation: 1, status: 302, location: "ws://b.example/next", now: 40)
        m.transportRedirected(generation: 1, status: 307, location: "wss://c.example:8443/", now: 90)
        #expect(m.phase == .connecting && m.nextWake == 10_000 && m.attempts == 0)
        #expect(m.transportOpened(generation: 1, now: 150) == .none)
        #expect(self.records(&m) == [
            LogRecord(generation: 1, time: 40, from: .connecting, to: .connecting,
                      event: .redirected(status: 302, location: "ws://b.example/next")),
            LogRecord(generation: 1, time: 90, from: .connecting, to: .connecting,
                      event: .redirected(status: 307, location: "wss://c.example:8443/")),
            LogRecord(generation: 1, time: 150, from: .connecting, to: .open, event: .opened),
        ])
        #expect(m.phase == .open)
    }

    @Test func aHopReportedByAnotherGenerationIsStale() {
        var m = self.machine()
        _ = m.start(now: 0)
        _ = m.timerFired(now: 10_000)  // connect timeout: generation 1 is closed, the session waits
        _ = self.records(&m)
        m.transportRedirected(generation: 1, status: 302, location: "ws://b.example/", now: 10_010)
        #expect(m.staleEvents == 1)
        #expect(self.records(&m) == [
            LogRecord(generation: 1, time: 10_010, from: .waiting, to: .waiting, event: .stale(ignored: .redirected)),
        ])
        _ = m.timerFired(now: m.retryAt!)
        #expect(m.generation == 2)
        m.transportRedirected(generation: 1, status: 302, location: "ws://b.example/", now: 12_000)
        #expect(m.staleEvents == 2)
        // Once open, no hop can come: a report then is stale too.
        _ = m.transportOpened(generation: 2, now: 12_100)
        m.transportRedirected(generation: 2, status: 302, location: "ws://b.example/", now: 12_200)
        #expect(m.staleEvents == 3 && m.phase == .open)
    }

    @Test(arguments: [
        (RedirectFailure.tooMany(limit: 5), 302, "more than 5 redirects"),
        (.loop, 301, "redirect loop"),
        (.downgrade, 308, "redirect from wss to ws"),
        (.invalidLocation("no host"), 307, "invalid Location: no host"),
    ])
    func aRedirectThatCannotBeFollowedStopsTheSessionWithItsStatusAndDetail(
        failure: RedirectFailure, status: Int, detail: String
    ) {
        var configuration = Self.noJitter
        configuration.retryPolicy = RetryPolicy(decide: { _ in .retry(after: .zero) })  // not asked: it is no backoff
        var m = self.machine(configuration)
        _ = m.start(now: 0)
        m.transportRedirected(generation: 1, status: 302, location: "ws://b.example/", now: 20)
        _ = self.records(&m)
        #expect(m.transportEnded(generation: 1, end: .redirectFailed(failure, status: status), now: 40) == .none)
        #expect(m.phase == .failed && m.failure == .redirectFailed(failure) && m.nextWake == nil)
        #expect(m.status.connectivity == .serverUnreachable(.invalidResponse))
        let records = self.records(&m)
        #expect(records == [
            LogRecord(generation: 1, time: 40, from: .connecting, to: .failed,
                      event: .closed(reason: .redirectFailed(failure), code: status)),
        ])
        #expect(records.first?.reason?.name == "redirect_failed" && records.first?.reason?.detail == detail)
        #expect(records.first?.level == .error)
        #expect(m.timerFired(now: 1_000_000) == .none)
        #expect(m.start(now: 1_000_001) == .openTransport(generation: 2))  // the user's start tries again
    }
}
