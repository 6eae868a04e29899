/// Messages waiting for an open connection, in the order they were queued, bounded by count and bytes.
///
/// A pure value: time comes in as integer milliseconds. The driver takes the first message when it can write it
/// (`popFirst`), and puts it back first (`pushFront`) when the write did not happen at all, so that the order is
/// kept across any number of reconnects. A message handed to a connection that then failed is not put back: it
/// may or may not have reached the peer, and sending it again could deliver it twice (at most once).
public struct Outbox<Element> {
    /// The bounds of an outbox. A message that does not fit is refused at once.
    public struct Limits: Equatable, Hashable, Sendable {
        /// The most messages waiting. Default 1,000.
        public var count: Int
        /// The most payload bytes waiting. Default 1 MiB.
        public var bytes: Int

        public init(count: Int = 1_000, bytes: Int = 1 << 20) {
            self.count = count
            self.bytes = bytes
        }
    }

    /// One waiting message with its size and, if it has one, its expiry time.
    public struct Entry {
        public var element: Element
        public var bytes: Int
        public var expiresAt: Int?
    }

    public let limits: Limits
    private var entries: [Entry] = []
    private var head = 0
    /// The payload bytes waiting.
    public private(set) var bytes = 0

    public init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// The messages waiting.
    public var count: Int { self.entries.count - self.head }
    public var isEmpty: Bool { self.count == 0 }
    /// The waiting elements, first first.
    public var elements: [Element] { self.entries[self.head...].map(\.element) }

    /// Queues `element` last. Returns false, changing nothing, when it would pass a limit.
    public mutating func append(_ element: Element, bytes: Int, expiresAt: Int?) -> Bool {
        guard self.count < self.limits.count, bytes <= self.limits.bytes - self.bytes else { return false }
        self.entries.append(Entry(element: element, bytes: bytes, expiresAt: expiresAt))
        self.bytes += bytes
        return true
    }

    /// Takes the first message that has not expired at `now`; the expired ones before it go to `expired`.
    public mutating func popFirst(now: Int, expired: (Element) -> Void) -> Entry? {
        self.removeExpired(now: now, expired)
        guard self.head < self.entries.count else { return nil }
        let entry = self.entries[self.head]
        self.head += 1
        self.bytes -= entry.bytes
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
    }

    /// Removes every message expired at `now` (at or after its expiry time), handing each to `expired`, in order.
    public mutating func removeExpired(now: Int, _ expired: (Element) -> Void) {
        guard self.entries[self.head...].contains(where: { ($0.expiresAt ?? .max) <= now }) else { return }
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
    }

    private mutating func compact() {
        if self.head == self.entries.count {
            self.entries.removeAll(keepingCapacity: true)
            self.head = 0
        } else if self.head >= 64 && self.head * 2 >= self.entries.count {
            self.entries.removeFirst(self.head)
            self.head = 0
        }
    }
}

extension Outbox.Entry: Sendable where Element: Sendable {}
extension Outbox: Sendable where Element: Sendable {}
