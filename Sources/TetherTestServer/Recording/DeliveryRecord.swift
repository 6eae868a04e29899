/// What the server's application took through the delivery protocol (`Scenario.DeliveryProtocol`), server-wide and
/// across connections (`TestServer.deliveryRecord`): each id of an acknowledged send once, whatever the number of
/// times a client wrote it.
public struct DeliveryRecord: Sendable, Equatable {
    /// The ids taken, in the order taken (at most `TestServer.Configuration.deliveryIDLimit`, the latest).
    public var taken: [String] = []
    /// Sends taken, counting those no longer listed.
    public var takenCount = 0
    /// Sends whose id had been taken before: acknowledged again, not taken twice.
    public var repeats = 0
    /// Ids forgotten to keep the limit: a repeat of one of them would be taken again.
    public var forgotten = 0
    /// Acknowledgements sent.
    public var acknowledgementsSent = 0

    public init() {}
}

/// The server-wide side of the delivery protocol: which ids were taken. Called on the server's loop thread; read from
/// any thread (it lives in a `Mutex`).
struct DeliveryLedger {
    private(set) var record = DeliveryRecord()
    private var known: Set<String> = []
    private var head = 0
    let limit: Int

    init(limit: Int) {
        self.limit = limit
    }

    /// A `send` of `id` arrived: true when taken now, false for a repeat.
    mutating func take(_ id: String) -> Bool {
        guard !self.known.contains(id) else {
            self.record.repeats += 1
            return false
        }
        self.record.takenCount += 1
        guard self.limit > 0 else {
            self.record.forgotten += 1
            return true
        }
        self.known.insert(id)
        self.record.taken.append(id)
        if self.record.taken.count - self.head > self.limit {
            self.known.remove(self.record.taken[self.head])
            self.head += 1
            self.record.forgotten += 1
            if self.head >= 1_024, self.head * 2 >= self.record.taken.count {
                self.record.taken.removeFirst(self.head)
                self.head = 0
            }
        }
        return true
    }

    mutating func acknowledged() {
        self.record.acknowledgementsSent += 1
    }

    /// The record as a reader sees it: the ids still listed.
    var snapshot: DeliveryRecord {
        var record = self.record
        if self.head > 0 { record.taken.removeFirst(self.head) }
        return record
    }
}
