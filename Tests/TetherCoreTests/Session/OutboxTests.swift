import Testing
import TetherCore

@Suite struct OutboxTests {
    @Test func keepsTheOrderAndPutsAnUnwrittenMessageBackFirst() {
        var outbox = Outbox<String>(limits: .init(count: 10, bytes: 100))
        #expect((outbox.append("a", bytes: 1, expiresAt: nil) as Bool))
        #expect((outbox.append("b", bytes: 1, expiresAt: nil) as Bool))
        let a = outbox.popFirst(now: 0, expired: { _ in Issue.record("nothing expires") })
        #expect(a?.element == "a")
        outbox.pushFront(a!)
        #expect((outbox.append("c", bytes: 1, expiresAt: nil) as Bool))
        #expect(outbox.elements == ["a", "b", "c"])
        #expect(outbox.bytes == 3)
    }

    @Test func refusesAtOnceWhenFullByCountOrBytes() {
        var outbox = Outbox<Int>(limits: .init(count: 2, bytes: 10))
        #expect((outbox.append(1, bytes: 6, expiresAt: nil) as Bool))
        #expect(!(outbox.append(2, bytes: 5, expiresAt: nil) as Bool))  // 11 bytes
        #expect((outbox.append(2, bytes: 4, expiresAt: nil) as Bool))
        #expect(!(outbox.append(3, bytes: 0, expiresAt: nil) as Bool))  // 3 messages
        #expect(outbox.elements == [1, 2] && outbox.bytes == 10)
    }

    @Test func expiredMessagesAreHandedOutInOrderAndNeverPopped() {
        var outbox = Outbox<Int>()
        _ = outbox.append(1, bytes: 1, expiresAt: 100)
        _ = outbox.append(2, bytes: 1, expiresAt: nil)
        _ = outbox.append(3, bytes: 1, expiresAt: 50)
        var expired: [Int] = []
        #expect(outbox.popFirst(now: 100, expired: { expired.append($0) })?.element == 2)
        #expect(expired == [1, 3])
        #expect(outbox.isEmpty && outbox.bytes == 0)
    }

    @Test func nextExpiryIsTheEarliestWaitingWhereverItIs() {
        var outbox = Outbox<String>()
        #expect(outbox.nextExpiry == nil)
        _ = outbox.append("never", bytes: 1, expiresAt: nil)
        #expect(outbox.nextExpiry == nil)
        _ = outbox.append("late", bytes: 1, expiresAt: 300)
        _ = outbox.append("early", bytes: 1, expiresAt: 100)
        _ = outbox.append("middle", bytes: 1, expiresAt: 200)
        #expect(outbox.nextExpiry == 100)  // the third message's, not the first's
        let never = outbox.popFirst(now: 0, expired: { _ in Issue.record("nothing expired yet") })
        let late = outbox.popFirst(now: 0, expired: { _ in Issue.record("nothing expired yet") })
        #expect(outbox.nextExpiry == 100)
        outbox.pushFront(late!)
        outbox.pushFront(never!)
        #expect(outbox.nextExpiry == 100)
        var expired: [String] = []
        outbox.removeExpired(now: 100) { expired.append($0) }
        #expect(expired == ["early"] && outbox.nextExpiry == 200)
        #expect(outbox.popFirst(now: 100, expired: { expired.append($0) })?.element == "never")
        #expect(outbox.popFirst(now: 100, expired: { expired.append($0) })?.element == "late")
        #expect(outbox.nextExpiry == 200)  // "late" left: "middle" is the earliest
        let middle = outbox.popFirst(now: 100, expired: { expired.append($0) })
        #expect(middle?.element == "middle" && outbox.nextExpiry == nil)
        outbox.pushFront(middle!)  // put back first, it is the earliest again
        #expect(outbox.nextExpiry == 200)
    }

    @Test func aMessagePutBackFirstIsTheEarliestOnlyIfItExpiresFirst() {
        var outbox = Outbox<String>()
        _ = outbox.append("a", bytes: 1, expiresAt: 50)
        _ = outbox.append("b", bytes: 1, expiresAt: 50)
        let a = outbox.popFirst(now: 0, expired: { _ in })
        #expect(outbox.nextExpiry == 50)
        outbox.pushFront(a!)  // ties with "b": either one gives 50
        #expect(outbox.nextExpiry == 50)
        _ = outbox.popFirst(now: 0, expired: { _ in })
        #expect(outbox.nextExpiry == 50)  // "b" still waits
        _ = outbox.popFirst(now: 0, expired: { _ in })
        #expect(outbox.nextExpiry == nil)
    }

    @Test func randomOperationsKeepTheOrder() {
        var random = SplitMix64(seed: 16)
        var outbox = Outbox<Int>(limits: .init(count: 50, bytes: 500))
        var next = 0
        var taken: [Int] = []
        var dropped: [Int] = []
        var expiries: [Int: Int] = [:]
        for step in 0..<20_000 {
            switch random.next() % 5 {
            case 0, 1:
                let expiry: Int? = random.next() % 3 == 0 ? step + Int(random.next() % 400) : nil
                if outbox.append(next, bytes: Int(random.next() % 20), expiresAt: expiry) {
                    expiries[next] = expiry
                    next += 1
                }
            case 2, 3:
                if let entry = outbox.popFirst(now: step, expired: { dropped.append($0) }) {
                    if random.next() % 3 == 0 { outbox.pushFront(entry) } else { taken.append(entry.element) }
                }
            default:
                outbox.removeExpired(now: step) { dropped.append($0) }
            }
            let earliest = outbox.elements.compactMap { expiries[$0] }.min()
            guard outbox.nextExpiry == earliest else {
                Issue.record("step \(step): nextExpiry is not the earliest waiting expiry")
                return
            }
        }
        #expect(zip(taken, taken.dropFirst()).allSatisfy { $0 < $1 })
        #expect(Set(taken).isDisjoint(with: dropped))
        #expect(taken.count + dropped.count + outbox.count == next)
    }
}
