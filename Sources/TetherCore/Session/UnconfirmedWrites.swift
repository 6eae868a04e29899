/// What was written to each connection since its last proof of life, so that the messages a lost connection may not
/// have delivered can be named. The session machine decides what proves a connection alive
/// (`OutboxNotice.provedAlive`) and when one is lost (`OutboxNotice.connectionLost`); the driver records here the
/// writes that completed (`.now` and `.queued` alike) and the pings it sent.
///
/// A pong proves what was written before its ping: TCP delivers in order, and the peer answered a ping that came
/// after those messages. So each ping notes how many writes its connection had then (`pingSent`), and when its pong
/// is accepted (`confirmed`) those writes are forgotten; what was written after the ping waits for the next pong.
/// A write is recorded once it completed, after it was handed to the connection: one in flight when the ping goes
/// counts after it, the safe side.
///
/// Bounded by `limits`, across connections: the first writes since a proof of life are kept; a write beyond the
/// limits is counted, not kept, and so is every later write to its connection until a pong confirms past it, so
/// that what is kept is always the oldest unconfirmed writes, in order. A pure value: the driver keeps it where its
/// senders can reach it (under a lock).
///
/// Public and inlinable, so that the client (another module) specializes it for its messages: run unspecialized there,
/// it looked up its nested types' metadata on every write, ping and pong (about 8,000 instructions per heartbeat
/// cycle; docs/benchmarks.md, issue 40). A `package` declaration's inlinable body is not available to other modules
/// with this toolchain (Swift 6.3), so it would not be specialized.
public struct UnconfirmedWrites<Element> {
    /// What a lost connection may not have delivered.
    public struct Report {
        public var generation: Int
        /// The oldest unconfirmed writes, in the order they were written.
        public var elements: [Element]
        /// The writes after those that were counted but not kept (the limits were reached).
        public var notKept: Int

        @inlinable
        public init(generation: Int, elements: [Element], notKept: Int) {
            self.generation = generation
            self.elements = elements
            self.notKept = notKept
        }
    }

    /// What became of a write.
    public enum Recorded: Equatable {
        /// Kept until a pong confirms it or its connection is lost.
        case kept
        /// Past the limits: counted only.
        case counted
        /// Its connection was reported lost already (the write completed just after): the caller reports it alone.
        case afterLoss
        /// Not a connection being recorded (never opened here, or forgotten).
        case ignored
    }

    @usableFromInline
    struct Write {
        @usableFromInline var number: Int
        @usableFromInline var element: Element
        @usableFromInline var bytes: Int

        @inlinable
        init(number: Int, element: Element, bytes: Int) {
            self.number = number
            self.element = element
            self.bytes = bytes
        }
    }

    @usableFromInline
    struct Connection {
        @usableFromInline var generation: Int
        /// Writes recorded so far, kept or counted: the next one's number.
        @usableFromInline var written = 0
        /// Kept writes, oldest first; every number is below `countedFrom`.
        @usableFromInline var kept: [Write] = []
        /// The first write counted and not kept: it and every later one are counted only. Nil when none is.
        @usableFromInline var countedFrom: Int?
        /// Pings sent and not answered yet, oldest first: the id and the number of writes before it.
        @usableFromInline var pings: [(id: UInt64, mark: Int)] = []

        @inlinable
        init(generation: Int) {
            self.generation = generation
        }

        @inlinable
        var notKept: Int { self.countedFrom.map { self.written - $0 } ?? 0 }
    }

    public let limits: OutboxLimits
    /// The connections being recorded: a handful at most (the session's, a handover's second one, one closing).
    @usableFromInline var connections: [Connection] = []
    /// The latest generations reported lost, newest last.
    @usableFromInline var reported: [Int] = []
    /// Writes kept, and their payload bytes, across connections.
    @usableFromInline var keptTotal: (count: Int, bytes: Int) = (0, 0)
    /// Writes kept, across connections.
    @inlinable public var keptCount: Int { self.keptTotal.count }
    /// The payload bytes of the writes kept, across connections.
    @inlinable public var keptBytes: Int { self.keptTotal.bytes }

    /// Pings remembered per connection (the machine has one outstanding at a time; a paused heartbeat abandons
    /// one): older marks are dropped first, which only keeps their writes longer.
    @inlinable static var pingLimit: Int { 8 }
    /// Lost generations remembered for a write that completes after the report.
    @inlinable static var reportedLimit: Int { 4 }

    @inlinable
    public init(limits: OutboxLimits) {
        self.limits = limits
    }

    /// Starts recording the writes of `generation`'s connection (once it is made; a second call does nothing).
    @inlinable
    public mutating func opened(generation: Int) {
        guard self.index(of: generation) == nil else { return }
        self.connections.append(Connection(generation: generation))
    }

    /// A write of `bytes` payload bytes to `generation`'s connection completed.
    @inlinable @discardableResult
    public mutating func written(_ element: Element, bytes: Int, generation: Int) -> Recorded {
        guard let index = self.index(of: generation) else {
            return self.reported.contains(generation) ? .afterLoss : .ignored
        }
        let number = self.connections[index].written
        self.connections[index].written += 1
        guard self.connections[index].countedFrom == nil, self.keptCount < self.limits.count,
              bytes <= self.limits.bytes - self.keptBytes
        else {
            self.connections[index].countedFrom = self.connections[index].countedFrom ?? number
            return .counted
        }
        self.connections[index].kept.append(Write(number: number, element: element, bytes: bytes))
        self.keptTotal.count += 1
        self.keptTotal.bytes += bytes
        return .kept
    }

    /// Ping `id` was handed to `generation`'s connection: its pong will confirm every write recorded before now.
    @inlinable
    public mutating func pingSent(_ id: UInt64, generation: Int) {
        guard let index = self.index(of: generation) else { return }
        if self.connections[index].pings.count == Self.pingLimit { self.connections[index].pings.removeFirst() }
        self.connections[index].pings.append((id, self.connections[index].written))
    }

    /// The pong of ping `ping` on `generation`'s connection was accepted: the writes recorded before that ping
    /// reached the peer, and are forgotten (with the marks of that ping and of older ones).
    @inlinable
    public mutating func confirmed(generation: Int, ping: UInt64) {
        guard let index = self.index(of: generation),
              let mark = self.connections[index].pings.last(where: { $0.id == ping })?.mark
        else {
            return
        }
        // In place: a copy of the connection would share its arrays with `connections`, and removing from them
        // would then copy them (an allocation per heartbeat cycle, and another when the next ping is appended).
        self.connections[index].pings.removeAll { $0.id <= ping }
        let confirmed = self.connections[index].kept.prefix { $0.number < mark }
        self.keptTotal.count -= confirmed.count
        self.keptTotal.bytes -= confirmed.reduce(0) { $0 + $1.bytes }
        self.connections[index].kept.removeFirst(confirmed.count)
        if let countedFrom = self.connections[index].countedFrom, countedFrom < mark {
            self.connections[index].countedFrom = mark < self.connections[index].written ? mark : nil
        }
    }

    /// `generation`'s connection is lost: what was written to it since its last proof of life, nil when nothing
    /// was. It is no longer recorded; a write to it that completes later is `.afterLoss`.
    @inlinable
    public mutating func lost(generation: Int) -> Report? {
        guard let connection = self.remove(generation) else { return nil }
        self.reported.append(generation)
        if self.reported.count > Self.reportedLimit { self.reported.removeFirst() }
        guard !connection.kept.isEmpty || connection.notKept > 0 else { return nil }
        return Report(generation: generation, elements: connection.kept.map(\.element), notKept: connection.notKept)
    }

    /// `generation`'s connection ended without being lost (closed on purpose, or already reported): forgotten.
    @inlinable
    public mutating func forget(generation: Int) {
        _ = self.remove(generation)
    }

    /// The generations of the connections being recorded, oldest first.
    package var generations: [Int] { self.connections.map(\.generation).sorted() }

    @inlinable
    func index(of generation: Int) -> Int? {
        self.connections.firstIndex { $0.generation == generation }
    }

    @inlinable
    mutating func remove(_ generation: Int) -> Connection? {
        guard let index = self.index(of: generation) else { return nil }
        let connection = self.connections.remove(at: index)
        self.keptTotal.count -= connection.kept.count
        self.keptTotal.bytes -= connection.kept.reduce(0) { $0 + $1.bytes }
        return connection
    }
}

extension UnconfirmedWrites: Sendable where Element: Sendable {}
extension UnconfirmedWrites.Report: Sendable where Element: Sendable {}
extension UnconfirmedWrites.Report: Equatable where Element: Equatable {}
extension UnconfirmedWrites.Write: Sendable where Element: Sendable {}
extension UnconfirmedWrites.Connection: Sendable where Element: Sendable {}
