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
package struct UnconfirmedWrites<Element> {
    /// What a lost connection may not have delivered.
    package struct Report {
        package var generation: Int
        /// The oldest unconfirmed writes, in the order they were written.
        package var elements: [Element]
        /// The writes after those that were counted but not kept (the limits were reached).
        package var notKept: Int
    }

    /// What became of a write.
    package enum Recorded: Equatable {
        /// Kept until a pong confirms it or its connection is lost.
        case kept
        /// Past the limits: counted only.
        case counted
        /// Its connection was reported lost already (the write completed just after): the caller reports it alone.
        case afterLoss
        /// Not a connection being recorded (never opened here, or forgotten).
        case ignored
    }

    fileprivate struct Write {
        var number: Int
        var element: Element
        var bytes: Int
    }

    fileprivate struct Connection {
        var generation: Int
        /// Writes recorded so far, kept or counted: the next one's number.
        var written = 0
        /// Kept writes, oldest first; every number is below `countedFrom`.
        var kept: [Write] = []
        /// The first write counted and not kept: it and every later one are counted only. Nil when none is.
        var countedFrom: Int?
        /// Pings sent and not answered yet, oldest first: the id and the number of writes before it.
        var pings: [(id: UInt64, mark: Int)] = []

        var notKept: Int { self.countedFrom.map { self.written - $0 } ?? 0 }
    }

    package let limits: OutboxLimits
    /// The connections being recorded: a handful at most (the session's, a handover's second one, one closing).
    private var connections: [Connection] = []
    /// The latest generations reported lost, newest last.
    private var reported: [Int] = []
    /// Writes kept, and their payload bytes, across connections.
    package private(set) var keptCount = 0
    package private(set) var keptBytes = 0

    /// Pings remembered per connection (the machine has one outstanding at a time; a paused heartbeat abandons
    /// one): older marks are dropped first, which only keeps their writes longer.
    private static var pingLimit: Int { 8 }
    /// Lost generations remembered for a write that completes after the report.
    private static var reportedLimit: Int { 4 }

    package init(limits: OutboxLimits) {
        self.limits = limits
    }

    /// Starts recording the writes of `generation`'s connection (once it is made; a second call does nothing).
    package mutating func opened(generation: Int) {
        guard self.index(of: generation) == nil else { return }
        self.connections.append(Connection(generation: generation))
    }

    /// A write of `bytes` payload bytes to `generation`'s connection completed.
    @discardableResult
    package mutating func written(_ element: Element, bytes: Int, generation: Int) -> Recorded {
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
        self.keptCount += 1
        self.keptBytes += bytes
        return .kept
    }

    /// Ping `id` was handed to `generation`'s connection: its pong will confirm every write recorded before now.
    package mutating func pingSent(_ id: UInt64, generation: Int) {
        guard let index = self.index(of: generation) else { return }
        if self.connections[index].pings.count == Self.pingLimit { self.connections[index].pings.removeFirst() }
        self.connections[index].pings.append((id, self.connections[index].written))
    }

    /// The pong of ping `ping` on `generation`'s connection was accepted: the writes recorded before that ping
    /// reached the peer, and are forgotten (with the marks of that ping and of older ones).
    package mutating func confirmed(generation: Int, ping: UInt64) {
        guard let index = self.index(of: generation),
              let mark = self.connections[index].pings.last(where: { $0.id == ping })?.mark
        else {
            return
        }
        var connection = self.connections[index]
        connection.pings.removeAll { $0.id <= ping }
        let confirmed = connection.kept.prefix { $0.number < mark }
        self.keptCount -= confirmed.count
        self.keptBytes -= confirmed.reduce(0) { $0 + $1.bytes }
        connection.kept.removeFirst(confirmed.count)
        if let countedFrom = connection.countedFrom, countedFrom < mark {
            connection.countedFrom = mark < connection.written ? mark : nil
        }
        self.connections[index] = connection
    }

    /// `generation`'s connection is lost: what was written to it since its last proof of life, nil when nothing
    /// was. It is no longer recorded; a write to it that completes later is `.afterLoss`.
    package mutating func lost(generation: Int) -> Report? {
        guard let connection = self.remove(generation) else { return nil }
        self.reported.append(generation)
        if self.reported.count > Self.reportedLimit { self.reported.removeFirst() }
        guard !connection.kept.isEmpty || connection.notKept > 0 else { return nil }
        return Report(generation: generation, elements: connection.kept.map(\.element), notKept: connection.notKept)
    }

    /// `generation`'s connection ended without being lost (closed on purpose, or already reported): forgotten.
    package mutating func forget(generation: Int) {
        _ = self.remove(generation)
    }

    /// The generations of the connections being recorded, oldest first.
    package var generations: [Int] { self.connections.map(\.generation).sorted() }

    private func index(of generation: Int) -> Int? {
        self.connections.firstIndex { $0.generation == generation }
    }

    private mutating func remove(_ generation: Int) -> Connection? {
        guard let index = self.index(of: generation) else { return nil }
        let connection = self.connections.remove(at: index)
        self.keptCount -= connection.kept.count
        self.keptBytes -= connection.kept.reduce(0) { $0 + $1.bytes }
        return connection
    }
}

extension UnconfirmedWrites: Sendable where Element: Sendable {}
extension UnconfirmedWrites.Report: Sendable where Element: Sendable {}
extension UnconfirmedWrites.Report: Equatable where Element: Equatable {}
extension UnconfirmedWrites.Write: Sendable where Element: Sendable {}
extension UnconfirmedWrites.Connection: Sendable where Element: Sendable {}
