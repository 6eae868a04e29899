/// The acknowledged sends of the outbox (docs/delivery.md), the outbox writer's child: which queued tickets wait for
/// an acknowledgement, how often each was written, and on which connection each written one waits. The rules:
/// - an acknowledged send is queued like any message and written in its turn; once written it waits for its
///   acknowledgement (`awaiting`), its payload kept by the driver, counted against the outbox limits;
/// - an acknowledgement naming its id settles it wherever it is: waiting for it, waiting to be written again (taken
///   out of the outbox), or being written (forgotten once the write is over). An acknowledgement counts whatever
///   connection it came on: it says the server has the message;
/// - when the connection it waits on is over — lost (the machine gave up on it, or it ended without being asked),
///   or ended after the machine closed it on purpose, whose closing handshake could still bring the
///   acknowledgement — it goes back into the outbox, where it was first queued, to be written again after the next
///   greeting; a write that completes after its connection was over goes back at once;
/// - it is given up after `maximumWrites` writes, when the session is stopped, or when the connection refuses it as
///   too large; it expires as a queued message does, also while it waits for its acknowledgement.
struct AcknowledgementLedger: Equatable, Sendable {
    struct Pending: Equatable, Sendable {
        var id: String
        /// Writes started and not refused before anything of them left (`notOpen`, `tooLarge`): the times the server
        /// may have received it, the one in flight included.
        var writes = 0
        /// The connection it waits on for its acknowledgement; nil while it waits to be written or is being written.
        var awaitingOn: Int?
        /// Acknowledged while being written: forgotten once the write is over.
        var settled = false
    }

    let maximumWrites: Int?
    /// Every acknowledged send not settled yet, by ticket.
    private(set) var pending: [Int: Pending] = [:]
    /// The ticket of each id pending.
    private var tickets: [String: Int] = [:]
    /// The written ones waiting for their acknowledgement, in the order written, with their sizes and expiries.
    private(set) var awaiting = Outbox<Int>(limits: OutboxLimits(count: .max, bytes: .max))
    /// Connections over lately (most recent last): a write to one of them that completes afterwards goes back at once.
    private var over: [Int] = []
    private(set) var counts = DeliveryCounts()

    /// Connections remembered as over: a handful is live or closing at a time.
    private static var overLimit: Int { 8 }

    init(maximumWrites: Int?) {
        self.maximumWrites = maximumWrites
    }

    func isAcknowledged(_ ticket: Int) -> Bool { self.pending[ticket] != nil }

    func isPending(id: String) -> Bool { self.tickets[id] != nil }

    /// An acknowledged send of `id` was queued under `ticket`.
    mutating func queued(ticket: Int, id: String) {
        self.pending[ticket] = Pending(id: id)
        self.tickets[id] = ticket
    }

    /// The acknowledged send of `ticket` is being written: one write more (counted from its start, so that an
    /// acknowledgement that overtakes the report of the write's end counts it).
    mutating func writing(_ ticket: Int) {
        guard var send = self.pending[ticket] else { return }
        send.writes += 1
        if send.writes > 1 { self.counts.rewrites += 1 }
        self.pending[ticket] = send
    }

    /// Acknowledgements of `ids` arrived: each settles its send wherever it is (`inFlight`: the ticket being written).
    mutating func acknowledge(
        _ ids: [String], outbox: inout Outbox<Int>, inFlight: Int?, notices: inout MachineNotices
    ) {
        for id in ids {
            guard let ticket = self.tickets[id], var send = self.pending[ticket], !send.settled else {
                self.counts.unmatchedAcknowledgements += 1
                continue
            }
            if send.awaitingOn != nil {
                if self.awaiting.first == ticket {
                    _ = self.awaiting.popFirst(now: .min, expired: { _ in })  // the usual order: the oldest first
                } else {
                    _ = self.awaiting.removeAll { $0 == ticket }
                }
                self.forget(ticket)
            } else if ticket == inFlight {
                send.settled = true  // its write finishes first
                self.pending[ticket] = send
                self.tickets[id] = nil
            } else {
                _ = outbox.removeAll { $0 == ticket }  // waiting to be written again
                self.forget(ticket)
            }
            self.counts.acknowledged += 1
            notices.append(.acknowledged(ticket: ticket, id: id, writes: send.writes))
        }
    }

    /// The write of `entry` (an acknowledged send) to `generation` ended with `result`.
    mutating func finished(
        _ entry: Outbox<Int>.Entry, generation: Int, result: WriteResult, stopped: Bool,
        outbox: inout Outbox<Int>, notices: inout MachineNotices
    ) {
        let ticket = entry.element
        guard var send = self.pending[ticket] else { return }
        switch result {
        case .written, .interrupted:
            break
        case .notOpen, .tooLarge:
            if send.writes > 1 { self.counts.rewrites -= 1 }  // nothing of it left: not a write
            send.writes -= 1
        }
        guard !send.settled else {
            self.forget(ticket)  // acknowledged meanwhile, and reported then
            return
        }
        self.pending[ticket] = send
        switch result {
        case .written, .interrupted:
            if self.over.contains(generation) {
                _ = self.putBack([entry], stopped: stopped, outbox: &outbox, notices: &notices)  // written next
            } else {
                send.awaitingOn = generation
                self.pending[ticket] = send
                _ = self.awaiting.append(ticket, bytes: entry.bytes, expiresAt: entry.expiresAt)
            }
        case .notOpen where stopped:
            self.giveUp(ticket, reason: .stopped, notices: &notices)
        case .notOpen:
            outbox.returnUnwritten(entry)  // not written at all: again, where it was queued, for the next connection
        case .tooLarge:
            self.giveUp(ticket, reason: .tooLarge, notices: &notices)
        }
    }

    /// The connection of `generation` is over (lost, or ended): what waits on it for an acknowledgement goes back
    /// into the outbox (given up when the session is stopped, or at the write limit). Returns whether anything went
    /// back. A second report of the same connection finds nothing.
    @discardableResult
    mutating func connectionOver(
        _ generation: Int, stopped: Bool, outbox: inout Outbox<Int>, notices: inout MachineNotices
    ) -> Bool {
        // Without a pending send nothing can wait on it: the ledger (and the machine's state) stays as it was.
        guard !self.pending.isEmpty, !self.over.contains(generation) else { return false }
        self.over.append(generation)
        if self.over.count > Self.overLimit { self.over.removeFirst() }
        guard !self.awaiting.isEmpty else { return false }
        let pending = self.pending
        let entries = self.awaiting.removeAll { pending[$0]?.awaitingOn == generation }
        return self.putBack(entries, stopped: stopped, outbox: &outbox, notices: &notices)
    }

    /// Puts `entries` back into the outbox to be written again, or gives them up; returns whether any went back.
    private mutating func putBack(
        _ entries: [Outbox<Int>.Entry], stopped: Bool, outbox: inout Outbox<Int>, notices: inout MachineNotices
    ) -> Bool {
        var returning: [Outbox<Int>.Entry] = []
        for entry in entries {
            guard let send = self.pending[entry.element] else { continue }
            if stopped {
                self.giveUp(entry.element, reason: .stopped, notices: &notices)
            } else if let maximum = self.maximumWrites, send.writes >= maximum {
                self.giveUp(entry.element, reason: .writeLimit, notices: &notices)
            } else {
                self.pending[entry.element]?.awaitingOn = nil
                returning.append(entry)
            }
        }
        outbox.putBack(returning)
        return !returning.isEmpty
    }

    /// Those waiting for their acknowledgement that expired at `now` are reported and forgotten.
    mutating func expire(now: Int, notices: inout MachineNotices) {
        var expired: [Int] = []
        self.awaiting.removeExpired(now: now) { expired.append($0) }
        for ticket in expired {
            self.expired(ticket, notices: &notices)
        }
    }

    /// The acknowledged send of `ticket`, waiting in the outbox, expired.
    mutating func expired(_ ticket: Int, notices: inout MachineNotices) {
        guard let send = self.pending[ticket] else { return }
        self.forget(ticket)
        notices.append(.expired(ticket: ticket, id: send.id, writes: send.writes))
    }

    /// The machine gives up on the acknowledged send of `ticket`, waiting in the outbox or just written.
    mutating func giveUp(_ ticket: Int, reason: DeliveryGiveUpReason, notices: inout MachineNotices) {
        guard let send = self.pending[ticket] else { return }
        self.forget(ticket)
        notices.append(.gaveUp(ticket: ticket, id: send.id, writes: send.writes, reason: reason))
    }

    private mutating func forget(_ ticket: Int) {
        guard let send = self.pending.removeValue(forKey: ticket) else { return }
        if self.tickets[send.id] == ticket { self.tickets[send.id] = nil }
    }
}
