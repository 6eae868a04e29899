/// The session machine's outbox child: the queued messages (as tickets; the driver keeps their payloads), the
/// `.now` sends parked behind them, and the one write in flight. Which connection is written to is the parent's to
/// say (`openGeneration`); the rules of order are here:
/// - queued messages go out first, in the order they were queued, on an open (and greeted) connection;
/// - a `.now` send that arrives while queued messages or a write wait is parked, and goes out after every message
///   queued before it and before every message queued after it: on the wire, the order in which they came;
/// - a write that did not happen at all (`notOpen`) is put back first, for the next connection (dropped as
///   `.stopped` if the session stopped meanwhile); one interrupted midway is dropped as `.writeInterrupted` (at most
///   once); after either, nothing more is written to that connection;
/// - a message the connection refused as too large is dropped as `.tooLarge` (a parked send's caller gets the
///   error), and the next write goes on that connection, which is fine;
/// - on stop every queued message is dropped as `.stopped`; an expired one as `.expired`, at its expiry.
struct OutboxWriter: Equatable, Sendable {
    /// The write in flight: a queued message (kept to be put back), or the first parked send.
    enum Write: Equatable, Sendable {
        case queued(generation: Int, Outbox<Int>.Entry)
        case parked(generation: Int)
    }

    var outbox: Outbox<Int>
    /// Tickets handed out so far; the next one is this.
    private(set) var issued = 0
    /// For each `.now` send parked in the driver, in order: the first ticket issued after it parked (every queued
    /// message with a smaller ticket goes before it).
    private var parked: [Int] = []
    private(set) var inFlight: Write?
    /// The connection on which a write failed: nothing more is written to it.
    private var broken: Int?

    init(limits: OutboxLimits) {
        self.outbox = Outbox(limits: limits)
    }

    /// Queued messages waiting or being written.
    var queuedCount: Int {
        guard case .queued = self.inFlight else { return self.outbox.count }
        return self.outbox.count + 1
    }

    func route(openGeneration: Int?) -> SendRoute {
        guard let generation = openGeneration else { return .closed }
        let idle = self.outbox.isEmpty && self.inFlight == nil && self.parked.isEmpty
        return idle ? .direct(generation: generation) : .behindOutbox(generation: generation)
    }

    /// Queues a message of `bytes` expiring at `expiresAt`; nil when it does not fit.
    mutating func enqueue(bytes: Int, expiresAt: Int?, now: Int, notices: inout [OutboxNotice]) -> Int? {
        self.expire(now: now, notices: &notices)
        guard self.outbox.append(self.issued, bytes: bytes, expiresAt: expiresAt) else { return nil }
        defer { self.issued &+= 1 }
        return self.issued
    }

    mutating func park(openGeneration: Int?) -> NowSendDecision {
        switch self.route(openGeneration: openGeneration) {
        case .closed: return .refused
        case .direct(let generation): return .direct(generation: generation)
        case .behindOutbox:
            self.parked.append(self.issued)
            return .parked(count: self.parked.count)
        }
    }

    /// The next write on the open connection, if one is due and none is in flight.
    mutating func nextWrite(openGeneration: Int?, now: Int, notices: inout [OutboxNotice]) -> SessionAction {
        guard let generation = openGeneration, self.inFlight == nil, self.broken != generation else { return .none }
        self.expire(now: now, notices: &notices)
        if let parkedBefore = self.parked.first, (self.outbox.first ?? Int.max) >= parkedBefore {
            self.parked.removeFirst()  // every message queued before it is written
            self.inFlight = .parked(generation: generation)
            return .writeParkedSend(generation: generation)
        }
        guard let entry = self.outbox.popFirst(now: now, expired: { _ in }) else { return .none }
        self.inFlight = .queued(generation: generation, entry)
        return .writeQueued(generation: generation, ticket: entry.element)
    }

    /// The write in flight on `generation` ended with `result`. False when none was (a report that cannot match).
    mutating func finished(generation: Int, result: WriteResult, stopped: Bool, notices: inout [OutboxNotice]) -> Bool {
        guard let write = self.inFlight else { return false }
        switch write {
        case .queued(let written, let entry):
            guard written == generation else { return false }
            switch result {
            case .written: break
            case .notOpen where stopped: notices.append(.dropped(ticket: entry.element, reason: .stopped))
            case .notOpen: self.outbox.pushFront(entry)  // not written at all: first again, for the next connection
            case .interrupted: notices.append(.dropped(ticket: entry.element, reason: .writeInterrupted))
            case .tooLarge: notices.append(.dropped(ticket: entry.element, reason: .tooLarge))
            }
        case .parked(let written):
            guard written == generation else { return false }  // its caller got `result` from the driver
        }
        self.inFlight = nil
        switch result {
        case .written, .tooLarge: break  // the connection is fine
        case .notOpen, .interrupted: self.broken = generation
        }
        return true
    }

    /// The open connection is no longer the one `.now` writes to: the parked sends are refused.
    mutating func leftOpen(notices: inout [OutboxNotice]) {
        guard !self.parked.isEmpty else { return }
        notices.append(.parkedSendsRefused(count: self.parked.count))
        self.parked.removeAll()
    }

    mutating func expire(now: Int, notices: inout [OutboxNotice]) {
        self.outbox.removeExpired(now: now) { ticket in notices.append(.dropped(ticket: ticket, reason: .expired)) }
    }

    /// Stop: every queued message is dropped (`.stopped`, or `.expired` if it expired already), first first.
    mutating func dropAll(now: Int, notices: inout [OutboxNotice]) {
        while let entry = self.outbox.popFirst(now: now, expired: { ticket in
            notices.append(.dropped(ticket: ticket, reason: .expired))
        }) {
            notices.append(.dropped(ticket: entry.element, reason: .stopped))
        }
    }
}
