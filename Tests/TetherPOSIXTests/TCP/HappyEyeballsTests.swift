import Testing
@testable import TetherPOSIX

/// The racing decisions of RFC 8305 as transcripts: facts in, actions out, time in milliseconds.
@Suite struct HappyEyeballsTests {
    static func address(_ ip: String) -> SocketAddress { SocketAddress(ip: ip, port: 443)! }

    @Test func interleavingAlternatesFamiliesStartingWithTheFirstAddresssFamily() {
        let resolved = ["2001:db8::1", "2001:db8::2", "2001:db8::3", "192.0.2.1", "192.0.2.2"].map(Self.address)
        let ordered = HappyEyeballs.interleave(resolved, family: \.family).map(\.host)
        #expect(ordered == ["2001:db8::1", "192.0.2.1", "2001:db8::2", "192.0.2.2", "2001:db8::3"])

        let ipv4First = ["192.0.2.1", "192.0.2.2", "2001:db8::1"].map(Self.address)
        #expect(HappyEyeballs.interleave(ipv4First, family: \.family).map(\.host) == [
            "192.0.2.1", "2001:db8::1", "192.0.2.2",
        ])
        let oneFamily = ["192.0.2.1", "192.0.2.2"].map(Self.address)
        #expect(HappyEyeballs.interleave(oneFamily, family: \.family) == oneFamily)
        #expect(HappyEyeballs.interleave([SocketAddress](), family: \.family).isEmpty)
    }

    @Test func aSilentFirstAttemptIsJoinedByTheNextAfterTheDelayAndTheWinnerClosesIt() {
        var race = HappyEyeballs(count: 2, attemptDelay: 250)
        #expect(race.start(now: 1_000) == [.startAttempt(0), .setTimer(at: 1_250)])
        #expect(race.timerFired(now: 1_249) == [])  // early wake-up: nothing is due yet
        #expect(race.timerFired(now: 1_250) == [.startAttempt(1)])
        #expect(race.attemptConnected(1) == [.closeAttempt(0), .succeed(1)])
        #expect(race.attemptConnected(0) == [])  // connected on the same turn; it was closed
        #expect(race.timerFired(now: 1_500) == [])
    }

    @Test func theFirstAttemptWinningBeforeTheDelayStartsNoOther() {
        var race = HappyEyeballs(count: 3)
        #expect(race.start(now: 0) == [.startAttempt(0), .setTimer(at: 250)])
        #expect(race.attemptConnected(0) == [.succeed(0)])
        #expect(race.timerFired(now: 250) == [])
        #expect(race.deadlinePassed() == [])
    }

    @Test func aFailureStartsTheNextAttemptAtOnceAndRearmsTheTimer() {
        var race = HappyEyeballs(count: 3, attemptDelay: 300)
        #expect(race.start(now: 0) == [.startAttempt(0), .setTimer(at: 300)])
        #expect(race.attemptFailed(0, now: 40) == [.startAttempt(1), .setTimer(at: 340)])
        #expect(race.timerFired(now: 300) == [])  // the replaced timer
        #expect(race.timerFired(now: 340) == [.startAttempt(2)])
        #expect(race.attemptFailed(2, now: 350) == [])  // attempt 1 is still in flight
        #expect(race.attemptFailed(1, now: 360) == [.fail(.exhausted)])
        #expect(race.attemptFailed(1, now: 360) == [])
    }

    @Test func attemptsInFlightStayInFlightUntilOneConnects() {
        var race = HappyEyeballs(count: 3, attemptDelay: 100)
        _ = race.start(now: 0)
        #expect(race.timerFired(now: 100) == [.startAttempt(1), .setTimer(at: 200)])
        #expect(race.timerFired(now: 200) == [.startAttempt(2)])
        #expect(race.attemptConnected(0) == [.closeAttempt(1), .closeAttempt(2), .succeed(0)])
    }

    @Test func theDeadlineClosesEveryAttemptInFlight() {
        var race = HappyEyeballs(count: 3, attemptDelay: 100)
        _ = race.start(now: 0)
        _ = race.timerFired(now: 100)
        #expect(race.deadlinePassed() == [.closeAttempt(0), .closeAttempt(1), .fail(.timedOut)])
        #expect(race.timerFired(now: 200) == [])
        #expect(race.attemptConnected(1) == [])
        #expect(race.cancelled() == [])
    }

    @Test func cancellingBeforeTheStartFailsWithoutAnAttempt() {
        var race = HappyEyeballs(count: 1)
        #expect(race.cancelled() == [.fail(.cancelled)])
    }

    @Test func aSingleAddressArmsNoTimerAndItsFailureEndsTheRace() {
        var race = HappyEyeballs(count: 1)
        #expect(race.start(now: 0) == [.startAttempt(0)])
        #expect(race.attemptFailed(0, now: 5) == [.fail(.exhausted)])
    }

    @Test func theDelayIsKeptWithinTheRFCsBounds() {
        var fast = HappyEyeballs(count: 2, attemptDelay: 0)
        #expect(fast.start(now: 0) == [.startAttempt(0), .setTimer(at: 10)])
        var slow = HappyEyeballs(count: 2, attemptDelay: 60_000)
        #expect(slow.start(now: 0) == [.startAttempt(0), .setTimer(at: 2_000)])
    }
}
