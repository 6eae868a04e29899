import Testing
@testable import TetherCore

/// What acknowledged sends need of the outbox: taking one out of the middle, putting written ones back in order.
@Suite struct OutboxPutBackTests {
    @Test func entriesPutBackTakeTheirPlaceByTicketAndKeepTheEarliestExpiry() {
        var outbox = Outbox<Int>(limits: OutboxLimits(count: 10, bytes: 100))
        for ticket in [0, 1, 2, 3] {
            let appended = outbox.append(ticket, bytes: 10, expiresAt: ticket == 3 ? 500 : nil)
            #expect(appended)
        }
        let first = outbox.popFirst(now: 0, expired: { _ in })!
        let second = outbox.popFirst(now: 0, expired: { _ in })!
        #expect(outbox.elements == [2, 3] && outbox.bytes == 20)
        let removed = outbox.removeAll { $0 == 3 }
        #expect(removed.map(\.element) == [3] && outbox.elements == [2] && outbox.nextExpiry == nil)
        outbox.putBack(removed + [second, first])
        #expect(outbox.elements == [0, 1, 2, 3] && outbox.bytes == 40 && outbox.nextExpiry == 500)
        var expired: [Int] = []
        outbox.removeExpired(now: 500) { expired.append($0) }
        #expect(expired == [3] && outbox.elements == [0, 1, 2])
    }
}
