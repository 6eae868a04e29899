import Testing
@testable import TetherCore

@Suite struct LogRecordBufferTests {
    private func record(_ time: Int) -> LogRecord {
        LogRecord(generation: 1, time: time, from: .connecting, to: .open, event: .opened)
    }

    private func drained(_ buffer: inout LogRecordBuffer) -> [Int] {
        var times: [Int] = []
        buffer.drain { times.append($0.time) }
        return times
    }

    @Test func beyondItsCapacityTheOldestGoAndAreCountedAndADrainStartsOver() {
        var buffer = LogRecordBuffer(capacity: 3)
        for time in 1...5 { buffer.append(self.record(time)) }
        #expect(buffer.count == 3 && buffer.dropped == 2)
        #expect(self.drained(&buffer) == [3, 4, 5])
        #expect(buffer.count == 0)
        // After a wrapped ring, the next records come out in order from the first.
        for time in 6...7 { buffer.append(self.record(time)) }
        #expect(self.drained(&buffer) == [6, 7])
        for time in 8...12 { buffer.append(self.record(time)) }
        #expect(self.drained(&buffer) == [10, 11, 12])
        #expect(buffer.dropped == 4)
    }

    @Test func anEmptyDrainHandsNothing() {
        var buffer = LogRecordBuffer(capacity: 64)
        #expect(self.drained(&buffer).isEmpty)
        buffer.append(self.record(1))
        #expect(self.drained(&buffer) == [1])
    }
}
