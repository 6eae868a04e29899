/// A fixed-capacity ring of log records: allocated once, then appends and drains never touch the heap.
/// When full, the oldest record is overwritten and counted in `dropped`.
struct LogRecordBuffer: Sendable {
    private var storage: [LogRecord]
    private var start = 0
    private(set) var count = 0
    private(set) var dropped = 0

    init(capacity: Int) {
        precondition(capacity > 0, "LogRecordBuffer needs room for at least one record")
        let blank = LogRecord(generation: 0, kind: .stopped, time: 0, from: .stopped, to: .stopped)
        self.storage = Array(repeating: blank, count: capacity)
    }

    mutating func append(_ record: LogRecord) {
        let capacity = self.storage.count
        if self.count == capacity {
            self.storage[self.start] = record
            self.start = self.start + 1 == capacity ? 0 : self.start + 1
            self.dropped += 1
        } else {
            var index = self.start + self.count
            if index >= capacity { index -= capacity }
            self.storage[index] = record
            self.count += 1
        }
    }

    mutating func drain(_ body: (LogRecord) -> Void) {
        let capacity = self.storage.count
        var index = self.start
        for _ in 0..<self.count {
            body(self.storage[index])
            index = index + 1 == capacity ? 0 : index + 1
        }
        self.start = 0
        self.count = 0
    }
}
