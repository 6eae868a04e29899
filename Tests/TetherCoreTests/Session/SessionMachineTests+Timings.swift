import Testing
import TetherCore

/// The timings of an attempt on its records: the transport's steps, reported as it opens or ends before the open
/// (or asked for at the connect deadline), with the greeting the machine times itself, on the attempt's `.opened`
/// record or on the `.closed` record that ends it, and on no other.
extension SessionMachineTests {
    static let transportSteps = AttemptTimings(
        resolve: .init(start: 0, duration: 3),
        tcp: [.init(address: "192.0.2.2:443", start: 3, duration: 20, outcome: .connected)],
        tls: .init(start: 23, duration: 40), tlsHandshake: .full, upgrade: .init(start: 63, duration: 12))

    @Test func theOpenedRecordCarriesTheStepsTheTransportTimedAndNoOtherRecordDoes() {
        var m = self.machine()
        _ = m.start(now: 0)
        m.attemptTimed(generation: 1, Self.transportSteps, now: 80)
        #expect(m.transportOpened(generation: 1, now: 80) == .none)
        let records = self.records(&m)
        #expect(records.map(\.kind) == [.connecting, .opened])
        #expect(records[0].timings == nil)
        #expect(records[1].timings == Self.transportSteps)
        // The connection's later end is no attempt's failure: its record has no timings.
        _ = m.transportEnded(generation: 1, end: .receiveFailed, now: 5_000)
        #expect(self.records(&m).allSatisfy { $0.timings == nil })
    }

    /// A machine that greets, its first attempt timed and just opened at 80 ms: it is to send the greeting.
    func greeting() -> Machine {
        var configuration = Self.noJitter
        configuration.greets = true
        var m = self.machine(configuration)
        _ = m.start(now: 0)
        m.attemptTimed(generation: 1, Self.transportSteps, now: 80)
        #expect(m.transportOpened(generation: 1, now: 80) == .sendGreeting(generation: 1))
        return m
    }

    @Test func theGreetingIsTimedOnTheMachinesClockAfterTheTransportsSteps() {
        var m = self.greeting()
        #expect(m.greetingSent(generation: 1, now: 95) == .none)
        var expected = Self.transportSteps
        expected.greeting = .init(start: 75, duration: 15)
        #expect(self.records(&m).last?.timings == expected)
    }

    @Test func aGreetingThatFailsLeavesItsStepUnfinishedOnTheFailureRecord() {
        var m = self.greeting()
        _ = m.greetingFailed(generation: 1, now: 130)
        let closed = self.records(&m).first { $0.kind == .closed }
        #expect(closed?.reason == .receiveFailed)
        #expect(closed?.timings?.greeting == .init(start: 75, duration: 50, finished: false))
        #expect(closed?.timings?.upgrade == Self.transportSteps.upgrade)
    }

    @Test func anAttemptThatFailsCarriesTheStepsReachedOnItsCloseRecord() {
        var m = self.machine()
        _ = m.start(now: 0)
        let refused = AttemptTimings(
            resolve: .init(start: 0, duration: 1),
            tcp: [.init(address: "127.0.0.1:1", start: 1, duration: 0, outcome: .failed(.refused))])
        m.attemptTimed(generation: 1, refused, now: 2)
        _ = m.transportEnded(generation: 1, end: .connectFailed(.refused), now: 2)
        let records = self.records(&m)
        #expect(records.first { $0.kind == .closed }?.timings == refused)
        #expect(records.first { $0.kind == .retryScheduled }?.timings == nil)
    }

    @Test func theConnectDeadlineAsksForTheStepsSoFarOnceAndNotBefore() {
        var m = self.machine()
        _ = m.start(now: 0)
        #expect(m.attemptTimingsWanted(now: 9_999) == nil)
        #expect(m.attemptTimingsWanted(now: 10_000) == 1)
        let stalled = AttemptTimings(
            resolve: .init(start: 0, duration: 2),
            tcp: [.init(address: "192.0.2.9:80", start: 2, duration: 9_998, outcome: .unfinished)])
        m.attemptTimed(generation: 1, stalled, now: 10_000)
        _ = m.timerFired(now: 10_000)
        let closed = self.records(&m).first { $0.kind == .closed }
        #expect(closed?.reason == .connectTimeout && closed?.timings == stalled)
        #expect(m.attemptTimingsWanted(now: 10_000) == nil)  // waiting: nothing connects
    }

    @Test func timingsOfAnotherGenerationOrAfterTheOpenAreIgnored() {
        var m = self.machine()
        _ = m.start(now: 0)
        _ = m.timerFired(now: 10_000)  // generation 1 timed out
        m.attemptTimed(generation: 1, Self.transportSteps, now: 10_001)  // late: its record is out
        _ = m.timerFired(now: m.retryAt!)
        #expect(m.transportOpened(generation: 2, now: 11_100) == .none)
        m.attemptTimed(generation: 2, Self.transportSteps, now: 11_101)  // after the open
        _ = m.transportEnded(generation: 2, end: .receiveFailed, now: 11_200)
        #expect(self.records(&m).allSatisfy { $0.timings == nil })
    }
}
