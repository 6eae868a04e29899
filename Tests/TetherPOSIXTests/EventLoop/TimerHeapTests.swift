#if os(Linux)
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
        while let (entry, sequence) = heap.popDue(by: self.base + .seconds(1)) {
            guard case .once(let timer) = entry else { continue }
            order.append((self.base.duration(to: timer.deadline), sequence))
        }
        let expected = deadlines.enumerated().map { (Duration.milliseconds($0.element), UInt64($0.offset)) }
            .sorted { ($0.0, $0.1) < ($1.0, $1.1) }
        #expect(order.map(\.0) == expected.map(\.0))
        #expect(order.map(\.1) == expected.map(\.1))
    }

    /// A re-armable timer keeps one entry, moved in place by every arming (earlier or later) and taken out by a
    /// cancel: the heap does not grow with the armings, and its order is the latest armings'.
    @Test func aRearmedTimerKeepsOneEntryThatMovesInPlace() throws {
        let loop = try EventLoop(name: "test-heap-rearm")
        defer { loop.shutdown() }
        var heap = TimerHeap()
        for milliseconds in [10, 20, 30, 40, 50, 60, 70] {
            heap.push(self.timer(at: milliseconds))
        }
        let moving = LoopTimer(loop: loop) {}
        var sequence: UInt64 = 100
        for milliseconds in [45, 5, 65, 25, 75, 35] {
            sequence += 1
            moving.armedSequence.store(sequence, ordering: .relaxed)
            heap.place(moving, at: self.base + .milliseconds(milliseconds), leeway: .zero, sequence: sequence)
            #expect(heap.count == 8)
        }
        var order: [Duration] = []
        var movingAt: Duration?
        while let (entry, _) = heap.popDue(by: self.base + .seconds(1)) {
            switch entry {
            case .once(let timer):
                order.append(self.base.duration(to: timer.deadline))
            case .rearmable(let timer):
                #expect(timer === moving)
                movingAt = order.last
                order.append(.milliseconds(35))
            }
        }
        #expect(order == [10, 20, 30, 35, 40, 50, 60, 70].map { .milliseconds($0) })
        #expect(movingAt == .milliseconds(30))
        #expect(moving.heapIndex.load(ordering: .relaxed) == -1)

        for milliseconds in [10, 20, 30] {
            heap.push(self.timer(at: milliseconds))
        }
        moving.armedSequence.store(200, ordering: .relaxed)
        heap.place(moving, at: self.base + .milliseconds(15), leeway: .zero, sequence: 200)
        #expect(heap.count == 4)
        heap.remove(moving)
        #expect(heap.count == 3)
        #expect(self.offset(heap.wakeTime()) == .milliseconds(10))
        heap.remove(moving)  // no entry: nothing happens
        #expect(heap.count == 3)
    }

    /// A re-armable timer cancelled off the loop (its entry still in the heap until the loop's next turn) is not
    /// pending: the heap drops it at the top instead of waking for it.
    @Test func aRearmableTimerDisarmedElsewhereIsDroppedAtTheTop() throws {
        let loop = try EventLoop(name: "test-heap-disarmed")
        defer { loop.shutdown() }
        var heap = TimerHeap()
        let timer = LoopTimer(loop: loop) {}
        timer.armedSequence.store(7, ordering: .relaxed)
        heap.place(timer, at: self.base + .milliseconds(5), leeway: .zero, sequence: 7)
        heap.push(self.timer(at: 40))
        timer.armedSequence.store(0, ordering: .relaxed)
        #expect(self.offset(heap.wakeTime()) == .milliseconds(40))
        #expect(heap.count == 1)
        #expect(timer.heapIndex.load(ordering: .relaxed) == -1)
    }
}
#endif
