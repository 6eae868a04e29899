import Testing
import TetherCore

/// Transcripts of the outbox as the session machine runs it: which connection each write goes to, in which order,
/// and what a failed write, a stop and an expiry do.
extension SessionMachineTests {
    func notices(_ m: inout Machine) -> [OutboxNotice] {
        var notices: [OutboxNotice] = []
        m.drainOutboxNotices { notices.append($0) }
        return notices
    }

    /// Queues a message of 10 bytes and returns its ticket, expecting `action` with it.
    func queue(
        _ m: inout Machine, expiresAfter: Int? = nil, now: Int, expecting action: (Int) -> SessionAction = { _ in .none }
    ) -> Int {
        guard case .accepted(let ticket, let returned) = m.messageQueued(bytes: 10, expiresAfter: expiresAfter, now: now)
        else {
            Issue.record("refused")
            return -1
        }
        #expect(returned == action(ticket))
        return ticket
    }

    @Test func queuedMessagesWaitForTheOpenThenGoFirstInOrderOnThatGeneration() {
        var m = self.machine()
        let first = self.queue(&m, now: 0)  // before start: kept
        #expect(m.start(now: 0) == .openTransport(generation: 1))
        let second = self.queue(&m, now: 10)
        #expect(m.sendRoute == .closed)
        #expect(m.nowSendArrived(now: 10) == .refused)  // nothing open: `.now` is not queued
        #expect(m.transportOpened(generation: 1, now: 20) == .writeQueued(generation: 1, ticket: first))
        #expect(m.sendRoute == .behindOutbox(generation: 1))
        #expect(m.writeFinished(generation: 1, result: .written, now: 21) == .writeQueued(generation: 1, ticket: second))
        #expect(m.writeFinished(generation: 1, result: .written, now: 22) == .none)
        #expect(m.sendRoute == .direct(generation: 1))
        #expect(m.queuedCount == 0)
        #expect(self.notices(&m).isEmpty)
    }

    @Test func theGreetingGoesBeforeTheOutbox() {
        var configuration = Self.noJitter
        configuration.greets = true
        var m = self.machine(configuration)
        #expect(m.start(now: 0) == .openTransport(generation: 1))
        let ticket = self.queue(&m, now: 0)
        #expect(m.transportOpened(generation: 1, now: 5) == .sendGreeting(generation: 1))
        #expect(m.sendRoute == .closed)
        #expect(m.greetingSent(generation: 1, now: 6) == .writeQueued(generation: 1, ticket: ticket))
    }

    @Test func aNowSendWaitsBehindEveryMessageQueuedBeforeItAndBeforeEveryOneQueuedAfter() {
        var m = self.opened()
        let q1 = self.queue(&m, now: 200) { .writeQueued(generation: 1, ticket: $0) }
        #expect(m.sendRoute == .behindOutbox(generation: 1))
        let q2 = self.queue(&m, now: 201)
        #expect(m.nowSendArrived(now: 202) == .parked(count: 1))
        let q3 = self.queue(&m, now: 203)  // after the `.now` send: goes after it
        #expect(m.writeFinished(generation: 1, result: .written, now: 204) == .writeQueued(generation: 1, ticket: q2))
        #expect(m.writeFinished(generation: 1, result: .written, now: 205) == .writeParkedSend(generation: 1))
        #expect(m.writeFinished(generation: 1, result: .written, now: 206) == .writeQueued(generation: 1, ticket: q3))
        #expect(m.writeFinished(generation: 1, result: .written, now: 207) == .none)
        #expect(m.sendRoute == .direct(generation: 1))
        #expect(q1 < q2 && q2 < q3)
    }

    @Test func aWriteThatDidNotHappenIsPutBackFirstForTheNextGeneration() {
        var m = self.opened()
        let q1 = self.queue(&m, now: 200) { .writeQueued(generation: 1, ticket: $0) }
        let q2 = self.queue(&m, now: 201)
        #expect(m.nowSendArrived(now: 202) == .parked(count: 1))
        #expect(m.writeFinished(generation: 1, result: .notOpen, now: 203) == .none)  // nothing more on generation 1
        #expect(self.notices(&m).isEmpty)
        #expect(m.queuedCount == 2)
        #expect(m.transportEnded(generation: 1, end: .receiveFailed, now: 204) == .none)
        // `.now` is never carried over; what was written to generation 1 since its last pong is unconfirmed.
        #expect(self.notices(&m) == [.connectionLost(generation: 1), .parkedSendsRefused(count: 1)])
        #expect(m.timerFired(now: m.nextWake!) == .openTransport(generation: 2))
        #expect(m.transportOpened(generation: 2, now: 1_300) == .writeQueued(generation: 2, ticket: q1))
        #expect(m.writeFinished(generation: 2, result: .written, now: 1_301) == .writeQueued(generation: 2, ticket: q2))
    }

    @Test func anInterruptedWriteIsDroppedNeverSentTwice() {
        var m = self.opened()
        let q1 = self.queue(&m, now: 200) { .writeQueued(generation: 1, ticket: $0) }
        let q2 = self.queue(&m, now: 201)
        #expect(m.writeFinished(generation: 1, result: .interrupted, now: 202) == .none)
        #expect(self.notices(&m) == [.dropped(ticket: q1, reason: .writeInterrupted)])
        #expect(m.transportEnded(generation: 1, end: .receiveFailed, now: 203) == .none)
        #expect(m.timerFired(now: m.nextWake!) == .openTransport(generation: 2))
        #expect(m.transportOpened(generation: 2, now: 1_300) == .writeQueued(generation: 2, ticket: q2))
    }

    @Test func aMessageTheConnectionRefusesAsTooLargeIsDroppedAndTheNextGoesOnTheSameConnection() {
        var m = self.opened()
        let q1 = self.queue(&m, now: 200) { .writeQueued(generation: 1, ticket: $0) }
        #expect(m.nowSendArrived(now: 201) == .parked(count: 1))
        let q2 = self.queue(&m, now: 202)
        #expect(m.writeFinished(generation: 1, result: .tooLarge, now: 203) == .writeParkedSend(generation: 1))
        #expect(self.notices(&m) == [.dropped(ticket: q1, reason: .tooLarge)])
        // The parked send's caller gets the error from the driver; the connection is fine: the outbox goes on.
        #expect(m.writeFinished(generation: 1, result: .tooLarge, now: 204) == .writeQueued(generation: 1, ticket: q2))
        #expect(m.writeFinished(generation: 1, result: .written, now: 205) == .none)
        #expect(self.notices(&m).isEmpty)
        #expect(m.phase == .open && m.generation == 1)
        #expect(m.sendRoute == .direct(generation: 1))
    }

    @Test func aWriteStillInFlightOnTheOldGenerationIsSettledBeforeTheNewOneIsWritten() {
        var m = self.opened()
        let q1 = self.queue(&m, now: 200) { .writeQueued(generation: 1, ticket: $0) }
        #expect(m.transportEnded(generation: 1, end: .receiveFailed, now: 201) == .none)
        #expect(m.timerFired(now: m.nextWake!) == .openTransport(generation: 2))
        #expect(m.transportOpened(generation: 2, now: 1_300) == .none)  // q1's write is not settled yet
        #expect(m.sendRoute == .behindOutbox(generation: 2))
        #expect(m.nowSendArrived(now: 1_301) == .parked(count: 1))
        #expect(m.writeFinished(generation: 1, result: .notOpen, now: 1_302) == .writeQueued(generation: 2, ticket: q1))
        #expect(m.writeFinished(generation: 2, result: .written, now: 1_303) == .writeParkedSend(generation: 2))
        #expect(m.writeFinished(generation: 2, result: .written, now: 1_304) == .none)
        #expect(m.sendRoute == .direct(generation: 2))
    }

    @Test func stopDropsEveryQueuedMessageAndAWriteThatDidNotHappen() {
        var m = self.opened()
        let q1 = self.queue(&m, now: 200) { .writeQueued(generation: 1, ticket: $0) }
        let q2 = self.queue(&m, expiresAfter: 50, now: 201)
        let q3 = self.queue(&m, now: 202)
        #expect(m.nowSendArrived(now: 203) == .parked(count: 1))
        #expect(m.stop(now: 260) == .closeTransport(generation: 1, reason: .userStopped, code: 1000))
        #expect(self.notices(&m) == [
            .dropped(ticket: q2, reason: .expired), .dropped(ticket: q3, reason: .stopped),
            .parkedSendsRefused(count: 1),
        ])
        #expect(m.writeFinished(generation: 1, result: .notOpen, now: 261) == .none)
        #expect(self.notices(&m) == [.dropped(ticket: q1, reason: .stopped)])
        #expect(m.queuedCount == 0)
        #expect(m.nextWake == nil)
    }

    @Test func anExpiryIsTheMachinesOneWakeAndDropsOnlyWhatExpired() {
        var m = self.machine()
        #expect(m.start(now: 0) == .openTransport(generation: 1))  // connect deadline 10_000
        let late = self.queue(&m, expiresAfter: 300, now: 0)
        let never = self.queue(&m, now: 1)
        let early = self.queue(&m, expiresAfter: 100, now: 2)
        #expect(m.nextWake == 102)
        #expect(m.timerFired(now: 102) == .none)
        #expect(self.notices(&m) == [.dropped(ticket: early, reason: .expired)])
        #expect(m.nextWake == 300)
        #expect(m.timerFired(now: 300) == .none)
        #expect(self.notices(&m) == [.dropped(ticket: late, reason: .expired)])
        #expect(m.nextWake == 10_000)  // only the connect deadline: `never` does not expire
        #expect(m.transportOpened(generation: 1, now: 400) == .writeQueued(generation: 1, ticket: never))
    }

    @Test func aFullOutboxRefusesAndAnExpiredMessageMakesRoom() {
        var configuration = Self.noJitter
        configuration.outboxLimits = OutboxLimits(count: 2, bytes: 1_000)
        var m = self.machine(configuration)
        _ = self.queue(&m, expiresAfter: 100, now: 0)
        _ = self.queue(&m, now: 0)
        #expect(m.messageQueued(bytes: 10, expiresAfter: nil, now: 99) == .refused)
        let third = self.queue(&m, now: 100)
        #expect(third == 2)
        #expect(self.notices(&m) == [.dropped(ticket: 0, reason: .expired)])
    }

    @Test func theOutboxWaitsForTheProbeOnForegroundAndNothingIsWrittenWhileSuspended() {
        var configuration = Self.noJitter
        configuration.lifecycle = .keepAndProbe
        var m = self.opened(configuration)
        #expect(m.enteredBackground(now: 200) == .none)
        #expect(m.sendRoute == .closed)
        let ticket = self.queue(&m, now: 201)
        #expect(m.enteredForeground(now: 300) == .sendPing(generation: 1, ping: 1))
        #expect(m.sendRoute == .behindOutbox(generation: 1))
        #expect(m.pongReceived(generation: 1, ping: 1, now: 310) == .writeQueued(generation: 1, ticket: ticket))
    }
}
