import Testing
@testable import TetherPOSIX

/// The timer heap's wake time: timers close together share one wake-up, none fires outside its leeway.
struct TimerHeapTests {
    private let base = ContinuousClock.now

    private func timer(at milliseconds: Int, leeway: Int = 0) -> ScheduledTimer {
        ScheduledTimer(
            deadline: self.base + .milliseconds(milliseconds), leeway: .milliseconds(leeway), sequence: 0, work: {}
        )
    }

    private func offset(_ instant: ContinuousClock.Instant?) -> Duration? {
        instant.map { self.base.duration(to: $0) }
    }

    @Test func withoutLeewayTheWakeIsTheEarliestDeadline() {
        var heap = TimerHeap()
        heap.push(self.timer(at: 30))
        heap.push(self.timer(at: 10))
        heap.push(self.timer(at: 20))
        #expect(self.offset(heap.wakeTime()) == .milliseconds(10))
    }

    @Test func timersInsideTheFirstLeewayShareItsWake() {
        var heap = TimerHeap()
        heap.push(self.timer(at: 100, leeway: 10))
        heap.push(self.timer(at: 104, leeway: 10))
        heap.push(self.timer(at: 109, leeway: 10))
        heap.push(self.timer(at: 200, leeway: 10))
        #expect(self.offset(heap.wakeTime()) == .milliseconds(110))
    }

    @Test func aTimerWithLessLeewayInsideTheWindowBringsTheWakeForward() {
        var heap = TimerHeap()
        heap.push(self.timer(at: 100, leeway: 10))
        heap.push(self.timer(at: 103, leeway: 2))
        heap.push(self.timer(at: 108, leeway: 0))
        #expect(self.offset(heap.wakeTime()) == .milliseconds(105))
    }

    @Test func cancelledTimersOnTopAreDroppedAndAnEmptyHeapNeverWakes() {
        var heap = TimerHeap()
        let first = self.timer(at: 5, leeway: 50)
        heap.push(first)
        heap.push(self.timer(at: 40))
        _ = first.take()
        #expect(self.offset(heap.wakeTime()) == .milliseconds(40))
        var empty = TimerHeap()
        #expect(empty.wakeTime() == nil)
    }

    @Test func popOrderIsDeadlineThenSequenceWhateverTheLeeway() {
        var heap = TimerHeap()
        let deadlines = [50, 10, 40, 10, 30, 20, 60, 0]
        for (sequence, milliseconds) in deadlines.enumerated() {
            heap.push(ScheduledTimer(
                deadline: self.base + .milliseconds(milliseconds), leeway: .milliseconds(sequence % 3 * 7),
                sequence: UInt64(sequence), work: {}
            ))
        }
        var order: [(Duration, UInt64)] = []
        while let timer = heap.popFirst() {
            order.append((self.base.duration(to: timer.deadline), timer.sequence))
        }
        let expected = deadlines.enumerated().map { (Duration.milliseconds($0.element), UInt64($0.offset)) }
            .sorted { ($0.0, $0.1) < ($1.0, $1.1) }
        #expect(order.map(\.0) == expected.map(\.0))
        #expect(order.map(\.1) == expected.map(\.1))
    }
}
