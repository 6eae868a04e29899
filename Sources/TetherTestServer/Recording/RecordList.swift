/// The first `limit` records of one kind on a connection, with a count of every one appended, so
/// that a flood (a million pings) leaves bounded memory while the totals stay exact.
///
/// It reads like an array of what was kept — `record.pingsReceived[0]`, `.count`, `.map(\.payload)`
/// — and `total` and `dropped` say how many there were in all and how many were not kept. The first
/// ones are kept, not the last, so that an index names the same record for the connection's life.
public struct RecordList<Element: Sendable>: RandomAccessCollection, Sendable {
    /// The records kept, in order.
    public private(set) var elements: [Element] = []
    /// At most this many are kept.
    public let limit: Int
    /// Every record appended, kept or not.
    public private(set) var total = 0

    /// - Parameter limit: how many to keep (at least 0).
    public init(limit: Int) {
        self.limit = Swift.max(0, limit)
    }

    /// Records appended beyond `limit`, counted but not kept.
    public var dropped: Int { self.total - self.elements.count }

    /// Counts a record and keeps it while fewer than `limit` are kept. `element` is evaluated only
    /// when it is kept, so a payload beyond the limit is never copied.
    public mutating func append(_ element: @autoclosure () -> Element) {
        self.total += 1
        if self.elements.count < self.limit { self.elements.append(element()) }
    }

    public var startIndex: Int { self.elements.startIndex }
    public var endIndex: Int { self.elements.endIndex }
    public subscript(position: Int) -> Element { self.elements[position] }
}

extension RecordList: Equatable where Element: Equatable {}
