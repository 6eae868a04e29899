import Testing
import TetherTestServer

@Suite struct RecordListTests {
    @Test func keepsTheFirstRecordsUpToItsLimitAndCountsEveryOne() {
        var list = RecordList<Int>(limit: 3)
        #expect(list.isEmpty && list.total == 0 && list.dropped == 0)
        for value in 1...5 { list.append(value) }
        #expect(Array(list) == [1, 2, 3])
        #expect(list.count == 3 && list.total == 5 && list.dropped == 2)
        #expect(list[0] == 1 && list.last == 3)
    }

    @Test func anElementBeyondTheLimitIsNeverBuilt() {
        var list = RecordList<[UInt8]>(limit: 1)
        var built = 0
        func payload() -> [UInt8] {
            built += 1
            return [1, 2, 3]
        }
        list.append(payload())
        list.append(payload())
        list.append(payload())
        #expect(built == 1 && list.total == 3)
    }

    @Test func aLimitOfZeroKeepsCountsOnly() {
        var list = RecordList<Int>(limit: 0)
        list.append(7)
        #expect(list.isEmpty && list.total == 1 && list.dropped == 1)
    }
}
