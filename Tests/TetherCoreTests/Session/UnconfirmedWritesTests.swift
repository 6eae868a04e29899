import Testing
@testable import TetherCore

/// The record of what was written since a connection's last proof of life, as transcripts.
@Suite struct UnconfirmedWritesTests {
    typealias Record = UnconfirmedWrites<String>

    @Test func aPongConfirmsWhatWasWrittenBeforeItsPingAndALossReportsTheRest() {
        var record = Record(limits: OutboxLimits())
        record.opened(generation: 1)
        #expect(record.written("a", bytes: 1, generation: 1) == .kept)
        #expect(record.written("b", bytes: 1, generation: 1) == .kept)
        record.pingSent(1, generation: 1)
        #expect(record.written("c", bytes: 1, generation: 1) == .kept)  // after the ping: its pong proves nothing
        record.confirmed(generation: 1, ping: 1)
        #expect(record.keptCount == 1)
        record.pingSent(2, generation: 1)
        #expect(record.written("d", bytes: 1, generation: 1) == .kept)
        #expect(record.lost(generation: 1) == .init(generation: 1, elements: ["c", "d"], notKept: 0))
        #expect(record.keptCount == 0 && record.keptBytes == 0)
        // Reported once: the connection is no longer recorded, and a write that completes now is a late one.
        #expect(record.lost(generation: 1) == nil)
        #expect(record.written("e", bytes: 1, generation: 1) == .afterLoss)
    }

    @Test func aConnectionWithNothingUnconfirmedReportsNothing() {
        var record = Record(limits: OutboxLimits())
        record.opened(generation: 1)
        #expect(record.lost(generation: 1) == nil)
        record.opened(generation: 2)
        _ = record.written("a", bytes: 1, generation: 2)
        record.pingSent(3, generation: 2)
        record.confirmed(generation: 2, ping: 3)
        #expect(record.lost(generation: 2) == nil)
    }

    @Test func connectionsAreApartAndOnlyTheirOwnPingsConfirmThem() {
        var record = Record(limits: OutboxLimits())
        record.opened(generation: 1)
        record.opened(generation: 2)
        _ = record.written("old", bytes: 3, generation: 1)
        _ = record.written("new", bytes: 3, generation: 2)
        record.pingSent(5, generation: 2)
        record.confirmed(generation: 1, ping: 5)  // not generation 1's ping: nothing
        #expect(record.keptCount == 2)
        record.confirmed(generation: 2, ping: 5)
        #expect(record.lost(generation: 2) == nil)
        #expect(record.lost(generation: 1)?.elements == ["old"])
        // Never opened here, or closed on purpose (forgotten): a write to it is not recorded.
        #expect(record.written("x", bytes: 1, generation: 9) == .ignored)
        record.opened(generation: 3)
        record.forget(generation: 3)
        #expect(record.written("y", bytes: 1, generation: 3) == .ignored)
    }

    @Test func beyondItsLimitsTheRecordCountsAndKeepsTheOldestInOrder() {
        var record = Record(limits: OutboxLimits(count: 2, bytes: 10))
        record.opened(generation: 1)
        #expect(record.written("a", bytes: 4, generation: 1) == .kept)
        #expect(record.written("b", bytes: 4, generation: 1) == .kept)
        #expect(record.written("c", bytes: 1, generation: 1) == .counted)  // the count is reached
        #expect(record.written("d", bytes: 0, generation: 1) == .counted)  // and every later one is counted too
        #expect(record.keptCount == 2 && record.keptBytes == 8)
        #expect(record.lost(generation: 1) == .init(generation: 1, elements: ["a", "b"], notKept: 2))

        var bytes = Record(limits: OutboxLimits(count: 100, bytes: 10))
        bytes.opened(generation: 1)
        #expect(bytes.written("big", bytes: 11, generation: 1) == .counted)
        #expect(bytes.written("small", bytes: 1, generation: 1) == .counted)  // kept would break the order
        #expect(bytes.lost(generation: 1) == .init(generation: 1, elements: [], notKept: 2))

        var none = Record(limits: OutboxLimits(count: 0, bytes: 0))
        none.opened(generation: 1)
        #expect(none.written("a", bytes: 0, generation: 1) == .counted)
        #expect(none.lost(generation: 1)?.notKept == 1)
    }

    @Test func aPongPastTheCountedWritesStartsKeepingAgain() {
        var record = Record(limits: OutboxLimits(count: 1, bytes: 100))
        record.opened(generation: 1)
        _ = record.written("a", bytes: 1, generation: 1)
        _ = record.written("b", bytes: 1, generation: 1)  // counted
        record.pingSent(1, generation: 1)
        _ = record.written("c", bytes: 1, generation: 1)  // counted: after b
        record.confirmed(generation: 1, ping: 1)  // a and b confirmed; c is still counted (written after the ping)
        #expect(record.keptCount == 0)
        #expect(record.written("d", bytes: 1, generation: 1) == .counted)
        record.pingSent(2, generation: 1)
        record.confirmed(generation: 1, ping: 2)  // c and d confirmed: nothing counted any more
        #expect(record.written("e", bytes: 1, generation: 1) == .kept)
        #expect(record.lost(generation: 1) == .init(generation: 1, elements: ["e"], notKept: 0))
    }

    @Test func aPongForAnOlderPingConfirmsOnlyWhatCameBeforeItAndOlderMarksGo() {
        var record = Record(limits: OutboxLimits())
        record.opened(generation: 1)
        _ = record.written("a", bytes: 1, generation: 1)
        record.pingSent(1, generation: 1)  // abandoned (the heartbeat paused), never answered
        _ = record.written("b", bytes: 1, generation: 1)
        record.pingSent(2, generation: 1)
        _ = record.written("c", bytes: 1, generation: 1)
        record.confirmed(generation: 1, ping: 2)
        record.confirmed(generation: 1, ping: 1)  // its mark went with ping 2's pong: nothing more
        #expect(record.lost(generation: 1)?.elements == ["c"])
    }
}
