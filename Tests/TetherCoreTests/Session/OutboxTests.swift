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

    @Test func randomOperationsKeepTheOrder() {
        var random = SplitMix64(seed: 16)
        var outbox = Outbox<Int>(limits: .init(count: 50, bytes: 500))
        var next = 0
        var taken: [Int] = []
        var dropped: [Int] = []
        for step in 0..<20_000 {
            switch random.next() % 4 {
            case 0, 1:
                let expiry: Int? = random.next() % 5 == 0 ? step + Int(random.next() % 100) : nil
                if outbox.append(next, bytes: Int(random.next() % 20), expiresAt: expiry) { next += 1 }
            case 2:
                if let entry = outbox.popFirst(now: step, expired: { dropped.append($0) }) {
                    if random.next() % 3 == 0 { outbox.pushFront(entry) } else { taken.append(entry.element) }
                }
            default:
                outbox.removeExpired(now: step) { dropped.append($0) }
            }
        }
        #expect(zip(taken, taken.dropFirst()).allSatisfy { $0 < $1 })
        #expect(Set(taken).isDisjoint(with: dropped))
        #expect(taken.count + dropped.count + outbox.count == next)
    }
}
