/// The bounds of an outbox. A message that does not fit is refused at once.
public struct OutboxLimits: Equatable, Hashable, Sendable {
    /// The most messages waiting. Default 1,000.
    public var count: Int
    /// The most payload bytes waiting. Default 1 MiB.
    public var bytes: Int

    public init(count: Int = 1_000, bytes: Int = 1 << 20) {
        self.count = count
        self.bytes = bytes
    }
}

/// Messages waiting for an open connection, in the order they were queued, bounded by count and bytes.
///
/// A pure value: time comes in as integer milliseconds. The driver takes the first message when it can write it
/// (`popFirst`), and puts it back first (`pushFront`; `returnUnwritten`, behind acknowledged sends put back before
/// it) when the write did not happen at all, so that the order is kept across any number of reconnects. A message
/// handed to a connection that then failed is not put back: it may or may not have reached the peer, and sending it
/// again could deliver it twice (at most once); an acknowledged send is (`putBack`), at least once.
///
/// `nextExpiry` (the earliest expiry time waiting, which need not be the first message's) is kept as messages come
/// and go, at O(1) amortized per `append`, `popFirst` and `pushFront`, so that the driver can sleep until it;
/// `removeExpired` looks at the messages only when one has expired.
public struct Outbox<Element> {
    /// The bounds of an outbox (`OutboxLimits`).
    public typealias Limits = OutboxLimits

    /// One waiting message with its size and, if it has one, its expiry time.
    public struct Entry {
        public var element: Element
        public var bytes: Int
        public var expiresAt: Int?
        /// Which append made it: tells entries apart in `expiries`.
        fileprivate var sequence: Int
    }

    public let limits: Limits
    private var entries: [Entry] = []
    private var head = 0
    /// The entries, in queue order from `expiriesHead`, whose expiry is earlier than every later entry's (no expiry
    /// counts as never): increasing, so the first is the earliest of all. An entry leaves it when it leaves the
    /// outbox, or when a later entry expiring no later arrives.
    private var expiries: [(sequence: Int, expiresAt: Int)] = []
    private var expiriesHead = 0
    private var appended = 0
    /// The payload bytes waiting.
    public private(set) var bytes = 0

    public init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// The messages waiting.
    public var count: Int { self.entries.count - self.head }
    public var isEmpty: Bool { self.count == 0 }
    /// The first element waiting.
    public var first: Element? { self.head < self.entries.count ? self.entries[self.head].element : nil }
    /// The waiting elements, first first.
    public var elements: [Element] { self.entries[self.head...].map(\.element) }
    /// The earliest expiry time of the messages waiting, whichever their place; nil when none expires.
    public var nextExpiry: Int? {
        self.expiriesHead < self.expiries.count ? self.expiries[self.expiriesHead].expiresAt : nil
    }

    /// Queues `element` last. Returns false, changing nothing, when it would pass a limit.
    public mutating func append(_ element: Element, bytes: Int, expiresAt: Int?) -> Bool {
        guard self.count < self.limits.count, bytes <= self.limits.bytes - self.bytes else { return false }
        let entry = Entry(element: element, bytes: bytes, expiresAt: expiresAt, sequence: self.appended)
        self.appended &+= 1
        self.entries.append(entry)
        self.bytes += bytes
        if let expiresAt {
            // Entries before it that expire no earlier can no longer be the earliest while it waits.
            while self.expiries.count > self.expiriesHead, let last = self.expiries.last, last.expiresAt >= expiresAt {
                self.expiries.removeLast()
            }
            self.expiries.append((entry.sequence, expiresAt))
        }
        return true
    }

    /// Takes the first message that has not expired at `now`; the expired ones before it go to `expired`.
    public mutating func popFirst(now: Int, expired: (Element) -> Void) -> Entry? {
        self.removeExpired(now: now, expired)
        guard self.head < self.entries.count else { return nil }
        let entry = self.entries[self.head]
        self.head += 1
        self.bytes -= entry.bytes
        if self.expiriesHead < self.expiries.count, self.expiries[self.expiriesHead].sequence == entry.sequence {
            self.expiriesHead += 1
        }
        self.compact()
        return entry
    }

    /// Puts back, first, an entry taken by `popFirst` whose write did not happen. Never refused: it was counted
    /// before.
    public mutating func pushFront(_ entry: Entry) {
        if self.head > 0 {
            self.head -= 1
            self.entries[self.head] = entry
        } else {
            self.entries.insert(entry, at: 0)
        }
        self.bytes += entry.bytes
        // First again: it is the earliest expiry only if it expires before every other entry.
        if let expiresAt = entry.expiresAt, self.nextExpiry.map({ expiresAt < $0 }) ?? true {
            if self.expiriesHead > 0 {
                self.expiriesHead -= 1
                self.expiries[self.expiriesHead] = (entry.sequence, expiresAt)
            } else {
                self.expiries.insert((entry.sequence, expiresAt), at: 0)
            }
        }
    }

    /// Removes every message expired at `now` (at or after its expiry time), handing each to `expired`, in order.
    public mutating func removeExpired(now: Int, _ expired: (Element) -> Void) {
        guard let next = self.nextExpiry, next <= now else { return }
        var kept: [Entry] = []
        for entry in self.entries[self.head...] {
            if let expiry = entry.expiresAt, expiry <= now {
                self.bytes -= entry.bytes
                expired(entry.element)
            } else {
                kept.append(entry)
            }
        }
        self.entries = kept
        self.head = 0
        self.rebuildExpiries()
    }

    /// Removes every waiting entry whose element satisfies `predicate` and returns them, in order. O(n): for the
    /// rare removal from the middle (an acknowledgement of a message waiting to be written again).
    mutating func removeAll(where predicate: (Element) -> Bool) -> [Entry] {
        var removed: [Entry] = []
        var kept: [Entry] = []
        for entry in self.entries[self.head...] {
            if predicate(entry.element) {
                removed.append(entry)
                self.bytes -= entry.bytes
            } else {
                kept.append(entry)
            }
        }
        guard !removed.isEmpty else { return [] }
        self.entries = kept
        self.head = 0
        self.rebuildExpiries()
        return removed
    }

    /// The expiries rebuilt from the back of the waiting entries: an entry stays when it expires before every entry
    /// after it.
    private mutating func rebuildExpiries() {
        self.expiries.removeAll(keepingCapacity: true)
        self.expiriesHead = 0
        var earliestAfter: Int?
        for entry in self.entries[self.head...].reversed() {
            guard let expiresAt = entry.expiresAt, earliestAfter.map({ expiresAt < $0 }) ?? true else { continue }
            earliestAfter = expiresAt
            self.expiries.append((entry.sequence, expiresAt))
        }
        self.expiries.reverse()
    }

    private mutating func compact() {
        Self.compact(&self.entries, head: &self.head)
        Self.compact(&self.expiries, head: &self.expiriesHead)
    }

    /// Drops the items before `head` of a queue read from `head`: all of them once it is read to the end, else once
    /// they are at least 64 and half of the array, so that dropping costs O(1) amortized per item.
    private static func compact<Item>(_ items: inout [Item], head: inout Int) {
        if head == items.count {
            items.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 64 && head * 2 >= items.count {
            items.removeFirst(head)
            head = 0
        }
    }
}

extension Outbox where Element: Comparable {
    /// Puts back an entry taken by `popFirst` whose write did not happen, where its element sorts: first, unless
    /// entries put back since (`putBack`: the acknowledged sends of a connection that was lost before this write
    /// reported) sort before it. O(1) when it goes first, O(n) otherwise.
    mutating func returnUnwritten(_ entry: Entry) {
        if let first = self.first, first < entry.element {
            self.putBack([entry])
        } else {
            self.pushFront(entry)
        }
    }

    /// Puts entries taken by `popFirst` back among the waiting ones, each where its element sorts (the outbox keeps
    /// its elements in increasing order when they are tickets handed out in order): acknowledged sends written again
    /// after their connection ended go back in the order they were first queued. Never refused: they were counted
    /// before. O(n).
    mutating func putBack(_ returning: [Entry]) {
        guard !returning.isEmpty else { return }
        let sorted = returning.sorted { $0.element < $1.element }
        var merged: [Entry] = []
        merged.reserveCapacity(self.count + sorted.count)
        var next = sorted.startIndex
        for entry in self.entries[self.head...] {
            while next < sorted.endIndex, sorted[next].element < entry.element {
                merged.append(sorted[next])
                next += 1
            }
            merged.append(entry)
        }
        merged.append(contentsOf: sorted[next...])
        self.bytes += sorted.reduce(0) { $0 + $1.bytes }
        self.entries = merged
        self.head = 0
        self.rebuildExpiries()
    }
}

extension Outbox.Entry: Sendable where Element: Sendable {}
extension Outbox.Entry: Equatable where Element: Equatable {}

/// Two outboxes are equal when they hold the same entries, in the same order, under the same limits.
extension Outbox: Equatable where Element: Equatable {
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.limits == rhs.limits && lhs.bytes == rhs.bytes && lhs.entries[lhs.head...] == rhs.entries[rhs.head...]
            && lhs.nextExpiry == rhs.nextExpiry
    }
}
extension Outbox: Sendable where Element: Sendable {}
