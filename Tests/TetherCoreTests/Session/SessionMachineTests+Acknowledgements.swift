import Testing
@testable import TetherCore

/// Transcripts of acknowledged sends: what is kept after its write, what is written again after which open, when a
/// message counts as acknowledged, and when the machine gives up.
extension SessionMachineTests {
    func deliveryNotices(_ m: inout Machine) -> [DeliveryNotice] {
        var notices: [DeliveryNotice] = []
        m.drainDeliveryNotices { notices.append($0) }
        return notices
    }

    /// Queues an acknowledged send of 10 bytes with `id` and returns its ticket, expecting `action` with it.
    func queueAcknowledged(
        _ m: inout Machine, _ id: String, expiresAfter: Int? = nil, now: Int,
        expecting action: (Int) -> SessionAction = { _ in .none }
    ) -> Int {
        guard case .accepted(let ticket, let returned) = m.acknowledgedSendQueued(
            id: id, bytes: 10, expiresAfter: expiresAfter, now: now)
        else {
            Issue.record("not queued")
            return -1
        }
        #expect(returned == action(ticket))
        return ticket
    }

    /// A message that acknowledges `ids` and is not for the app.
    static func acknowledgement(_ ids: String...) -> DeliveryLabels {
        DeliveryLabels(acknowledges: ids, forApp: false)
    }

    /// Open on generation 1 at 100 with a greeting; the pong timeout of its first ping (at 15,100) loses it.
    func openedGreeting(_ configuration: SessionConfiguration = Self.noJitter) -> Machine {
        var configuration = configuration
        configuration.greets = true
        var m = self.machine(configuration)
        #expect(m.start(now: 0) == .openTransport(generation: 1))
        #expect(m.transportOpened(generation: 1, now: 100) == .sendGreeting(generation: 1))
        #expect(m.greetingSent(generation: 1, now: 100) == .none)
        return m
    }

    /// The session's connection of `generation`, open, is lost to a pong timeout at `now` (a ping at `now - 5,000`);
    /// the retry opens `generation + 1` at `retryAt` and greets it; returns the action of `greetingSent`.
    func loseAndReopen(_ m: inout Machine, generation: Int, pingAt: Int) -> SessionAction {
        guard case .sendPing = m.timerFired(now: pingAt) else {
            Issue.record("no ping at \(pingAt)")
            return .none
        }
        let lostAt = pingAt + 5_000
        #expect(m.timerFired(now: lostAt)
            == .closeTransport(generation: generation, reason: .pongTimeout, code: 1001))
        #expect(m.transportEnded(generation: generation, end: .closedLocally, now: lostAt + 10) == .none)
        guard let retryAt = m.retryAt else {
            Issue.record("not waiting")
            return .none
        }
        #expect(m.timerFired(now: retryAt) == .openTransport(generation: generation + 1))
        #expect(m.transportOpened(generation: generation + 1, now: retryAt + 50)
            == .sendGreeting(generation: generation + 1))
        return m.greetingSent(generation: generation + 1, now: retryAt + 60)
    }

    @Test func anAcknowledgedSendIsKeptAfterItsWriteUntilAMessageAcknowledgesIt() {
        var m = self.openedGreeting()
        let a = self.queueAcknowledged(&m, "a", now: 200) { .writeQueued(generation: 1, ticket: $0) }
        #expect(m.writeFinished(generation: 1, result: .written, now: 201) == .none)
        #expect(m.queuedCount == 1 && m.acknowledgedSendsPending == 1)  // written, not settled
        #expect(m.sendRoute == .direct(generation: 1))  // a `.now` send does not wait for an acknowledgement
        #expect(self.deliveryNotices(&m).isEmpty)

        // A message for the app acknowledges nothing; the acknowledgement itself is not for the app.
        #expect(m.messageReceived(generation: 1, bytes: 5, labels: DeliveryLabels(), now: 250) == .deliver)
        #expect(m.messageReceived(generation: 1, bytes: 5, labels: Self.acknowledgement("a"), now: 300) == .discard)
        #expect(self.deliveryNotices(&m) == [.acknowledged(ticket: a, id: "a", writes: 1)])
        #expect(m.queuedCount == 0 && m.acknowledgedSendsPending == 0)
        #expect(m.deliveryCounts.acknowledged == 1 && m.deliveryCounts.notForApp == 1)

        // A second acknowledgement of the same id names nothing any more: counted, nothing else.
        #expect(m.messageReceived(generation: 1, bytes: 5, labels: Self.acknowledgement("a"), now: 310) == .discard)
        #expect(self.deliveryNotices(&m).isEmpty)
        #expect(m.deliveryCounts.unmatchedAcknowledgements == 1)
        #expect(self.notices(&m).isEmpty)  // no outbox notice: it was never dropped
    }

    @Test func aLostConnectionsUnacknowledgedSendsAreWrittenAgainAfterTheNextGreetingInTheOrderQueued() {
        var m = self.openedGreeting()
        let a = self.queueAcknowledged(&m, "a", now: 200) { .writeQueued(generation: 1, ticket: $0) }
        let plain = self.queue(&m, now: 201)
        let b = self.queueAcknowledged(&m, "b", now: 202)
        #expect(m.writeFinished(generation: 1, result: .written, now: 203)
            == .writeQueued(generation: 1, ticket: plain))
        #expect(m.writeFinished(generation: 1, result: .written, now: 204) == .writeQueued(generation: 1, ticket: b))
        #expect(m.writeFinished(generation: 1, result: .written, now: 205) == .none)
        // The server acknowledges b only: a waits.
        #expect(m.messageReceived(generation: 1, bytes: 5, labels: Self.acknowledgement("b"), now: 300) == .discard)
        #expect(self.deliveryNotices(&m) == [.acknowledged(ticket: b, id: "b", writes: 1)])

        // The connection is lost: a goes back first; the plain queued message was written and is not sent again.
        // Queued after the loss, c goes after it.
        #expect(m.timerFired(now: 15_100) == .sendPing(generation: 1, ping: 1))
        #expect(m.timerFired(now: 20_100) == .closeTransport(generation: 1, reason: .pongTimeout, code: 1001))
        #expect(self.notices(&m) == [.connectionLost(generation: 1)])
        #expect(m.queuedCount == 1)
        let c = self.queueAcknowledged(&m, "c", now: 20_200)
        #expect(m.transportEnded(generation: 1, end: .closedLocally, now: 20_300) == .none)
        #expect(m.timerFired(now: 21_100) == .openTransport(generation: 2))
        #expect(m.transportOpened(generation: 2, now: 21_150) == .sendGreeting(generation: 2))  // the greeting first
        #expect(m.greetingSent(generation: 2, now: 21_160) == .writeQueued(generation: 2, ticket: a))
        #expect(m.writeFinished(generation: 2, result: .written, now: 21_170) == .writeQueued(generation: 2, ticket: c))
        #expect(m.writeFinished(generation: 2, result: .written, now: 21_180) == .none)
        #expect(m.messageReceived(generation: 2, bytes: 5, labels: Self.acknowledgement("a", "c"), now: 21_300)
            == .discard)
        #expect(self.deliveryNotices(&m) == [
            .acknowledged(ticket: a, id: "a", writes: 2), .acknowledged(ticket: c, id: "c", writes: 1),
        ])
        #expect(m.deliveryCounts.rewrites == 1 && m.queuedCount == 0)
    }

    @Test func aWriteThatCompletesAfterItsConnectionWasLostGoesBackAtOnce() throws {
        var m = self.openedGreeting()
        let a = self.queueAcknowledged(&m, "a", now: 200) { .writeQueued(generation: 1, ticket: $0) }
        // The server resets the connection while the write is in flight; the write then reports it broke midway.
        #expect(m.transportEnded(generation: 1, end: .receiveFailed, now: 210) == .none)
        #expect(m.writeFinished(generation: 1, result: .interrupted, now: 211) == .none)
        #expect(self.notices(&m) == [.connectionLost(generation: 1)])  // not `.dropped(.writeInterrupted)`
        #expect(m.queuedCount == 1)
        let retryAt = try #require(m.retryAt)
        #expect(m.timerFired(now: retryAt) == .openTransport(generation: 2))
        #expect(m.transportOpened(generation: 2, now: 1_300) == .sendGreeting(generation: 2))
        #expect(m.greetingSent(generation: 2, now: 1_310) == .writeQueued(generation: 2, ticket: a))
        #expect(m.writeFinished(generation: 2, result: .written, now: 1_320) == .none)
        #expect(m.messageReceived(generation: 2, bytes: 5, labels: Self.acknowledgement("a"), now: 1_400) == .discard)
        #expect(self.deliveryNotices(&m) == [.acknowledged(ticket: a, id: "a", writes: 2)])  // the broken write counts
    }

    /// A write that did not happen at all (`.notOpen`), reported after its connection's loss put earlier sends back,
    /// goes back behind them, where it was queued, not first: an acknowledged send or a plain queued one alike.
    /// Found under load by `manyTasksSendingAtOnceAreEachAcknowledgedOnceAndTheServerTakesEachOnce` (one task's
    /// sends reached the server out of order: t2-8 before t2-3).
    @Test(arguments: [true, false])
    func aWriteThatNeverHappenedGoesBackBehindTheSendsPutBackBeforeIt(acknowledged: Bool) throws {
        var m = self.openedGreeting()
        let a = self.queueAcknowledged(&m, "a", now: 200) { .writeQueued(generation: 1, ticket: $0) }
        let b = acknowledged ? self.queueAcknowledged(&m, "b", now: 201) : self.queue(&m, now: 201)
        #expect(m.writeFinished(generation: 1, result: .written, now: 202) == .writeQueued(generation: 1, ticket: b))
        // The connection breaks while b's write is in flight: a goes back; then b's write says nothing was written.
        #expect(m.transportEnded(generation: 1, end: .receiveFailed, now: 210) == .none)
        #expect(m.writeFinished(generation: 1, result: .notOpen, now: 211) == .none)
        #expect(m.queuedCount == 2)
        let retryAt = try #require(m.retryAt)
        #expect(m.timerFired(now: retryAt) == .openTransport(generation: 2))
        #expect(m.transportOpened(generation: 2, now: 1_300) == .sendGreeting(generation: 2))
        #expect(m.greetingSent(generation: 2, now: 1_310) == .writeQueued(generation: 2, ticket: a))
        #expect(m.writeFinished(generation: 2, result: .written, now: 1_320) == .writeQueued(generation: 2, ticket: b))
    }

    @Test func aConnectionClosedOnPurposeKeepsItsSendsUntilItsEndForTheClosingHandshakeMayAcknowledgeThem() {
        var m = self.openedGreeting()
        let a = self.queueAcknowledged(&m, "a", now: 200) { .writeQueued(generation: 1, ticket: $0) }
        let b = self.queueAcknowledged(&m, "b", now: 201)
        #expect(m.writeFinished(generation: 1, result: .written, now: 202) == .writeQueued(generation: 1, ticket: b))
        #expect(m.writeFinished(generation: 1, result: .written, now: 203) == .none)
        // The background closes the connection on purpose: nothing is lost yet.
        #expect(m.enteredBackground(now: 300)
            == .closeTransport(generation: 1, reason: .enteredBackground, code: 1001, reportSent: true))
        #expect(self.notices(&m).isEmpty && m.queuedCount == 2)
        // The server acknowledges a before it answers the close.
        #expect(m.messageReceived(generation: 1, bytes: 5, labels: Self.acknowledgement("a"), now: 310) == .discard)
        #expect(m.transportEnded(generation: 1, end: .closedLocally, now: 320) == .none)
        // b was not acknowledged before the end: it waits for the next connection.
        #expect(self.deliveryNotices(&m) == [.acknowledged(ticket: a, id: "a", writes: 1)])
        #expect(m.queuedCount == 1)
        #expect(m.enteredForeground(now: 5_000) == .openTransport(generation: 2))
        #expect(m.transportOpened(generation: 2, now: 5_050) == .sendGreeting(generation: 2))
        #expect(m.greetingSent(generation: 2, now: 5_060) == .writeQueued(generation: 2, ticket: b))
    }

    @Test func anAcknowledgementThatComesLateTakesTheSendOutOfTheOutboxOrSettlesItsWriteInFlight() throws {
        var m = self.openedGreeting()
        let a = self.queueAcknowledged(&m, "a", now: 200) { .writeQueued(generation: 1, ticket: $0) }
        let b = self.queueAcknowledged(&m, "b", now: 201)
        #expect(m.writeFinished(generation: 1, result: .written, now: 202) == .writeQueued(generation: 1, ticket: b))
        #expect(m.writeFinished(generation: 1, result: .written, now: 203) == .none)
        #expect(m.transportEnded(generation: 1, end: .peerClosed(code: 1001), now: 210) == .none)
        #expect(m.queuedCount == 2)  // both back in the outbox
        // The acknowledgement of a was read before the end but handled after it (a stale message): it still counts.
        #expect(m.messageReceived(generation: 1, bytes: 5, labels: Self.acknowledgement("a"), now: 220) == .discard)
        #expect(self.deliveryNotices(&m) == [.acknowledged(ticket: a, id: "a", writes: 1)])
        #expect(m.queuedCount == 1)
        let retryAt = try #require(m.retryAt)
        #expect(m.timerFired(now: retryAt) == .openTransport(generation: 2))
        #expect(m.transportOpened(generation: 2, now: 1_300) == .sendGreeting(generation: 2))
        #expect(m.greetingSent(generation: 2, now: 1_310) == .writeQueued(generation: 2, ticket: b))
        // b's acknowledgement arrives while it is written again: settled at once (two writes, the one in flight
        // counted: the acknowledgement may be of it, overtaking the report of its end).
        #expect(m.messageReceived(generation: 2, bytes: 5, labels: Self.acknowledgement("b"), now: 1_315) == .discard)
        #expect(self.deliveryNotices(&m) == [.acknowledged(ticket: b, id: "b", writes: 2)])
        #expect(m.writeFinished(generation: 2, result: .written, now: 1_320) == .none)
        #expect(m.queuedCount == 0 && m.acknowledgedSendsPending == 0)
        #expect(self.deliveryNotices(&m).isEmpty)  // reported once
        #expect(m.deliveryCounts.rewrites == 1)
    }

    @Test func stopGivesUpWhatWaitsToBeWrittenAndAtTheEndWhatTheClosingHandshakeDidNotAcknowledge() {
        var m = self.openedGreeting()
        let a = self.queueAcknowledged(&m, "a", now: 200) { .writeQueued(generation: 1, ticket: $0) }
        let b = self.queueAcknowledged(&m, "b", now: 201)
        let c = self.queueAcknowledged(&m, "c", now: 202)
        #expect(m.writeFinished(generation: 1, result: .written, now: 203) == .writeQueued(generation: 1, ticket: b))
        #expect(m.stop(now: 204) == .closeTransport(generation: 1, reason: .userStopped, code: 1000))
        #expect(self.deliveryNotices(&m) == [.gaveUp(ticket: c, id: "c", writes: 0, reason: .stopped)])
        // b's write happens (it is written, then waits for the end like a).
        #expect(m.writeFinished(generation: 1, result: .written, now: 205) == .none)
        #expect(m.messageReceived(generation: 1, bytes: 5, labels: Self.acknowledgement("b"), now: 210) == .discard)
        #expect(m.transportEnded(generation: 1, end: .closedLocally, now: 220) == .none)
        #expect(self.deliveryNotices(&m) == [
            .acknowledged(ticket: b, id: "b", writes: 1), .gaveUp(ticket: a, id: "a", writes: 1, reason: .stopped),
        ])
        #expect(m.queuedCount == 0 && m.acknowledgedSendsPending == 0)
    }

    @Test func aSendThatIsNeverAcknowledgedExpiresAlsoWhileItWaitsForItsAcknowledgement() {
        var m = self.openedGreeting()
        let a = self.queueAcknowledged(&m, "a", expiresAfter: 1_000, now: 200) {
            .writeQueued(generation: 1, ticket: $0)
        }
        #expect(m.writeFinished(generation: 1, result: .written, now: 201) == .none)
        #expect(m.nextWake == 1_200)  // its expiry, before the heartbeat's 15,100
        #expect(m.timerFired(now: 1_200) == .none)
        #expect(self.deliveryNotices(&m) == [.expired(ticket: a, id: "a", writes: 1)])
        #expect(m.queuedCount == 0 && m.nextWake == 15_100)
        // Expired before its first write: writes 0.
        let b = self.queueAcknowledged(&m, "b", expiresAfter: 100, now: 1_300) {
            .writeQueued(generation: 1, ticket: $0)
        }
        #expect(m.writeFinished(generation: 1, result: .notOpen, now: 1_310) == .none)  // the connection broke first
        #expect(m.timerFired(now: 1_400) == .none)
        #expect(self.deliveryNotices(&m) == [.expired(ticket: b, id: "b", writes: 0)])
    }

    @Test func aSendWrittenMaximumWritesTimesWithoutAnAcknowledgementIsGivenUp() {
        var configuration = Self.noJitter
        configuration.delivery.maximumWrites = 2
        var m = self.openedGreeting(configuration)
        let a = self.queueAcknowledged(&m, "a", now: 200) { .writeQueued(generation: 1, ticket: $0) }
        #expect(m.writeFinished(generation: 1, result: .written, now: 201) == .none)
        #expect(self.loseAndReopen(&m, generation: 1, pingAt: 15_100) == .writeQueued(generation: 2, ticket: a))
        #expect(m.writeFinished(generation: 2, result: .written, now: 21_300) == .none)
        #expect(self.loseAndReopen(&m, generation: 2, pingAt: 36_160) == .none)  // given up, not written a third time
        #expect(self.deliveryNotices(&m) == [.gaveUp(ticket: a, id: "a", writes: 2, reason: .writeLimit)])
        #expect(m.queuedCount == 0)
    }

    @Test func anIdThatWaitsIsRefusedAndTheSendsWaitingForAcknowledgementCountAgainstTheOutboxLimits() {
        var configuration = Self.noJitter
        configuration.outboxLimits = OutboxLimits(count: 2, bytes: 1_000)
        var m = self.openedGreeting(configuration)
        let a = self.queueAcknowledged(&m, "a", now: 200) { .writeQueued(generation: 1, ticket: $0) }
        #expect(m.acknowledgedSendQueued(id: "a", bytes: 10, expiresAfter: nil, now: 201) == .duplicate)
        #expect(m.writeFinished(generation: 1, result: .written, now: 202) == .none)
        let b = self.queueAcknowledged(&m, "b", now: 203) { .writeQueued(generation: 1, ticket: $0) }
        #expect(m.writeFinished(generation: 1, result: .written, now: 204) == .none)
        // Both written, both waiting: the outbox is full for either kind of message.
        #expect(m.acknowledgedSendQueued(id: "c", bytes: 10, expiresAfter: nil, now: 205) == .refused)
        #expect(m.messageQueued(bytes: 10, expiresAfter: nil, now: 205) == .refused)
        #expect(m.messageReceived(generation: 1, bytes: 5, labels: Self.acknowledgement("a"), now: 210) == .discard)
        #expect(self.deliveryNotices(&m) == [.acknowledged(ticket: a, id: "a", writes: 1)])
        // The id is free again once its send is settled.
        let again = self.queueAcknowledged(&m, "a", now: 211) { .writeQueued(generation: 1, ticket: $0) }
        #expect(again != a && again != b)
    }

    @Test func aSendOfTheOldConnectionOfAHandoverIsWrittenAgainOnTheNewOneWhenTheOldEndsWithoutItsAcknowledgement() {
        var (m, monitor) = self.openForHandover()
        let a = self.queueAcknowledged(&m, "a", now: 200) { .writeQueued(generation: 1, ticket: $0) }
        #expect(m.writeFinished(generation: 1, result: .written, now: 201) == .none)
        #expect(m.pathReported(monitor: monitor, Self.cellular, now: 1_000) == .openTransport(generation: 2))
        #expect(m.transportOpened(generation: 2, now: 1_100) == .none)  // moved: the old one drains
        #expect(m.timerFired(now: 1_600) == .closeTransport(generation: 1, reason: .handedOver, code: 1001))
        #expect(m.queuedCount == 1)  // it may still come on the old one, until its end
        #expect(m.transportEnded(generation: 1, end: .peerClosed(code: 1001), now: 1_700)
            == .writeQueued(generation: 2, ticket: a))
        #expect(m.writeFinished(generation: 2, result: .written, now: 1_710) == .none)
        #expect(m.messageReceived(generation: 2, bytes: 5, labels: Self.acknowledgement("a"), now: 1_800) == .discard)
        #expect(self.deliveryNotices(&m) == [.acknowledged(ticket: a, id: "a", writes: 2)])
    }

    @Test func whenTheOldConnectionOfAHandoverEndsOnItsOwnItsSendsGoOnTheNewOneAtOnce() {
        var (m, monitor) = self.openForHandover()
        let a = self.queueAcknowledged(&m, "a", now: 200) { .writeQueued(generation: 1, ticket: $0) }
        #expect(m.writeFinished(generation: 1, result: .written, now: 201) == .none)
        #expect(m.pathReported(monitor: monitor, Self.cellular, now: 1_000) == .openTransport(generation: 2))
        #expect(m.transportOpened(generation: 2, now: 1_100) == .none)
        #expect(m.transportEnded(generation: 1, end: .receiveFailed, now: 1_200)
            == .writeQueued(generation: 2, ticket: a))
        #expect(self.notices(&m) == [.connectionLost(generation: 1)])
    }

    @Test func withoutAnAcknowledgedSendAStaleEndChangesNothing() {
        var m = self.openedGreeting()
        _ = self.queue(&m, now: 200) { .writeQueued(generation: 1, ticket: $0) }
        let before = m.state
        #expect(m.transportEnded(generation: 7, end: .receiveFailed, now: 300) == .none)
        #expect(m.transportEventsFinished(generation: 7, now: 300) == .none)
        var after = m.state
        after.staleEvents = before.staleEvents
        #expect(after == before)
    }
}
