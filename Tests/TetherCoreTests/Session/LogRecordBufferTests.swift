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

    @Test func aRecordDrainedAloneComesOutWholeAndLaterDrainsKeepTheirOrder() {
        var buffer = LogRecordBuffer(capacity: 2)
        var timed = self.record(1)
        timed.timings = AttemptTimings(tcp: [.init(address: "192.0.2.1:80", start: 0, duration: 3, outcome: .connected)])
        buffer.append(timed)
        var records: [LogRecord] = []
        buffer.drain { records.append($0) }
        #expect(records == [timed] && records.first?.timings?.tcp.first?.duration == 3)
        // Alone and several at a time, wrapped or not, in turn.
        for time in 2...4 { buffer.append(self.record(time)) }
        #expect(self.drained(&buffer) == [3, 4])
        buffer.append(self.record(5))
        #expect(self.drained(&buffer) == [5])
        for time in 6...7 { buffer.append(self.record(time)) }
        #expect(self.drained(&buffer) == [6, 7])
        #expect(buffer.dropped == 1 && buffer.count == 0)
        // A ring of one keeps the newest.
        var one = LogRecordBuffer(capacity: 1)
        for time in 1...3 { one.append(self.record(time)) }
        #expect(self.drained(&one) == [3] && one.dropped == 2)
        one.append(self.record(4))
        #expect(self.drained(&one) == [4])
    }
}
