/// A bounded buffer of log records between two drains. Its array grows to the most records held between two drains
/// (a few: an event produces at most three, and the client drains after every event), never beyond `capacity`, and
/// keeps that storage: from then on appends and drains do not touch the heap. When full, the oldest record is
/// overwritten and counted in `dropped`.
///
/// Not allocated up front: a ring of the full capacity (64 records, of 136 bytes then; 72 since the attempt timings
/// are boxed) was 8.7 KiB per client, half of what an idle connection cost (`tether-bench idle`,
/// `idle.rss_kib_per_conn`).
struct LogRecordBuffer: Sendable {
    /// In order while not full; once full, a ring whose oldest record is at `start`.
    private var storage: [LogRecord] = []
    private var start = 0
    let capacity: Int
    private(set) var dropped = 0

    init(capacity: Int) {
        precondition(capacity > 0, "LogRecordBuffer needs room for at least one record")
        self.capacity = capacity
    }

    var count: Int { self.storage.count }

    mutating func append(_ record: consuming LogRecord) {
        guard self.storage.count == self.capacity else {
            self.storage.append(record)
            return
        }
        self.storage[self.start] = record
        self.start = self.start + 1 == self.capacity ? 0 : self.start + 1
        self.dropped += 1
    }

    mutating func drain(_ body: (consuming LogRecord) -> Void) {
        let count = self.storage.count
        if count <= 1 {
            // What most events leave, drained after each: none, or one record, moved out (`removeAll` and a copy
            // of the record cost more than the rest of a drain).
            if count == 1 { body(self.storage.removeLast()) }
            self.start = 0
            return
        }
        var index = self.start
        for _ in 0..<count {
            body(self.storage[index])
            index = index + 1 == count ? 0 : index + 1
        }
        self.storage.removeAll(keepingCapacity: true)
        self.start = 0
    }
}
