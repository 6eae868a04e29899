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
/// Acknowledged sends (docs/delivery.md) are queued messages kept after their write until acknowledged: their own
/// rules are the child's, `AcknowledgementLedger`; they count against the same limits while they wait.
struct OutboxWriter: Equatable, Sendable {
    /// The write in flight: a queued message (kept to be put back), or the first parked send.
    enum Write: Equatable, Sendable {
        case queued(generation: Int, Outbox<Int>.Entry)
        case parked(generation: Int)
    }

    var outbox: Outbox<Int>
    /// The acknowledged sends among the tickets, and those written that wait for their acknowledgement.
    var acknowledgements: AcknowledgementLedger
    /// Tickets handed out so far; the next one is this.
    private(set) var issued = 0
    /// For each `.now` send parked in the driver, in order: the first ticket issued after it parked (every queued
    /// message with a smaller ticket goes before it).
    private var parked: [Int] = []
    private(set) var inFlight: Write?
    /// The connection on which a write failed: nothing more is written to it.
    private var broken: Int?

    init(limits: OutboxLimits, maximumWrites: Int? = nil) {
        self.outbox = Outbox(limits: limits)
        self.acknowledgements = AcknowledgementLedger(maximumWrites: maximumWrites)
    }

    /// Queued messages waiting or being written, and acknowledged sends waiting for their acknowledgement.
    var queuedCount: Int {
        let waiting = self.outbox.count + self.acknowledgements.awaiting.count
        guard case .queued = self.inFlight else { return waiting }
        return waiting + 1
    }

    /// The earliest expiry of a message waiting to be written or for its acknowledgement.
    var nextExpiry: Int? {
        guard let awaiting = self.acknowledgements.awaiting.nextExpiry else { return self.outbox.nextExpiry }
        return min(awaiting, self.outbox.nextExpiry ?? .max)
    }

    func route(openGeneration: Int?) -> SendRoute {
        guard let generation = openGeneration else { return .closed }
        let idle = self.outbox.isEmpty && self.inFlight == nil && self.parked.isEmpty
        return idle ? .direct(generation: generation) : .behindOutbox(generation: generation)
    }

    /// Queues a message of `bytes` expiring at `expiresAt`; nil when it does not fit (the acknowledged sends waiting
    /// for their acknowledgement count against the limits too).
    mutating func enqueue(bytes: Int, expiresAt: Int?, now: Int, notices: inout MachineNotices) -> Int? {
        self.expire(now: now, notices: &notices)
        let awaiting = self.acknowledgements.awaiting
        guard awaiting.isEmpty || (self.outbox.count + awaiting.count < self.outbox.limits.count
            && bytes <= self.outbox.limits.bytes - self.outbox.bytes - awaiting.bytes)
        else {
            return nil
        }
        guard self.outbox.append(self.issued, bytes: bytes, expiresAt: expiresAt) else { return nil }
        defer { self.issued &+= 1 }
        return self.issued
    }

    /// Queues an acknowledged send of `id`; nil when it does not fit.
    mutating func enqueueAcknowledged(
        id: String, bytes: Int, expiresAt: Int?, now: Int, notices: inout MachineNotices
    ) -> Int? {
        guard let ticket = self.enqueue(bytes: bytes, expiresAt: expiresAt, now: now, notices: &notices) else {
            return nil
        }
        self.acknowledgements.queued(ticket: ticket, id: id)
        return ticket
    }

    /// Acknowledgements of `ids` arrived.
    mutating func acknowledge(_ ids: [String], notices: inout MachineNotices) {
        let inFlight: Int? = if case .queued(_, let entry) = self.inFlight { entry.element } else { nil }
        self.acknowledgements.acknowledge(ids, outbox: &self.outbox, inFlight: inFlight, notices: &notices)
    }

    /// The connection of `generation` is over (lost or ended): the acknowledged sends waiting on it go back into
    /// the outbox. Returns whether any did (the next write may be due).
    mutating func connectionOver(_ generation: Int, stopped: Bool, notices: inout MachineNotices) -> Bool {
        self.acknowledgements.connectionOver(generation, stopped: stopped, outbox: &self.outbox, notices: &notices)
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
    mutating func nextWrite(openGeneration: Int?, now: Int, notices: inout MachineNotices) -> SessionAction {
        guard let generation = openGeneration, self.inFlight == nil, self.broken != generation else { return .none }
        self.expire(now: now, notices: &notices)
        if let parkedBefore = self.parked.first, (self.outbox.first ?? Int.max) >= parkedBefore {
            self.parked.removeFirst()  // every message queued before it is written
            self.inFlight = .parked(generation: generation)
            return .writeParkedSend(generation: generation)
        }
        guard let entry = self.outbox.popFirst(now: now, expired: { _ in }) else { return .none }
        self.acknowledgements.writing(entry.element)
        self.inFlight = .queued(generation: generation, entry)
        return .writeQueued(generation: generation, ticket: entry.element)
    }

    /// The write in flight on `generation` ended with `result`. False when none was (a report that cannot match).
    mutating func finished(
        generation: Int, result: WriteResult, stopped: Bool, notices: inout MachineNotices
    ) -> Bool {
        guard let write = self.inFlight else { return false }
        switch write {
        case .queued(let written, let entry):
            guard written == generation else { return false }
            if self.acknowledgements.isAcknowledged(entry.element) {
                self.acknowledgements.finished(
                    entry, generation: generation, result: result, stopped: stopped, outbox: &self.outbox,
                    notices: &notices)
                break
            }
            switch result {
            case .written: break
            case .notOpen where stopped: notices.append(.dropped(ticket: entry.element, reason: .stopped))
            case .notOpen: self.outbox.returnUnwritten(entry)  // not written at all: again, for the next connection
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
    mutating func leftOpen(notices: inout MachineNotices) {
        guard !self.parked.isEmpty else { return }
        notices.append(.parkedSendsRefused(count: self.parked.count))
        self.parked.removeAll()
    }

    mutating func expire(now: Int, notices: inout MachineNotices) {
        var expired: [Int] = []
        self.outbox.removeExpired(now: now) { expired.append($0) }
        for ticket in expired {
            self.expired(ticket, notices: &notices)
        }
        self.acknowledgements.expire(now: now, notices: &notices)
    }

    private mutating func expired(_ ticket: Int, notices: inout MachineNotices) {
        if self.acknowledgements.isAcknowledged(ticket) {
            self.acknowledgements.expired(ticket, notices: &notices)
        } else {
            notices.append(.dropped(ticket: ticket, reason: .expired))
        }
    }

    /// Stop: every queued message is dropped (`.stopped`, or `.expired` if it expired already), first first; an
    /// acknowledged send waiting to be written is given up (`.stopped`). Those waiting for their acknowledgement wait
    /// until their connection ends: its closing handshake may still bring it.
    mutating func dropAll(now: Int, notices: inout MachineNotices) {
        var expired: [Int] = []
        while let entry = self.outbox.popFirst(now: now, expired: { expired.append($0) }) {
            for ticket in expired {
                self.expired(ticket, notices: &notices)
            }
            expired.removeAll()
            if self.acknowledgements.isAcknowledged(entry.element) {
                self.acknowledgements.giveUp(entry.element, reason: .stopped, notices: &notices)
            } else {
                notices.append(.dropped(ticket: entry.element, reason: .stopped))
            }
        }
        for ticket in expired {
            self.expired(ticket, notices: &notices)
        }
    }
}
