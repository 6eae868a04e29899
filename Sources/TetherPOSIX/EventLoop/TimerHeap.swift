#if os(Linux)
/// What a loop's timer heap holds: a one-shot timer (`EventLoop.schedule`) or a re-armable one (`LoopTimer`).
enum TimerEntry {
    case once(ScheduledTimer)
    case rearmable(LoopTimer)

    /// Runs the work of the arming with heap key `sequence`, unless it was cancelled (or, re-armable, re-armed).
    func fire(sequence: UInt64) {
        switch self {
        case .once(let timer): timer.take()?()
        case .rearmable(let timer): timer.fire(sequence: sequence)
        }
    }
}

/// A binary min-heap of timers ordered by (deadline, sequence).
///
/// A one-shot timer is pushed once; when it is cancelled it stays until it reaches the top and is dropped there (its
/// work closure is already released by `cancel`). A re-armable timer (`LoopTimer`) has at most one entry, which knows
/// its place (`LoopTimer.heapIndex`): arming it again moves that entry up or down in place, and cancelling it on the
/// loop removes it, so a timer moved at every event (a heartbeat deadline) allocates nothing and leaves nothing
/// behind.
///
/// The ordering keys live in an array of plain values beside the array of entries, so sifting compares and moves
/// trivial values, and the timers are moved in memory without being retained or released. A key holds its instants
/// as `Duration`s since a fixed origin: `ContinuousClock.Instant` is not frozen, so outside the standard library
/// every copy of a key holding one went through its value witnesses (a profile of 10,000 heartbeating connections
/// put a tenth of the loop's time in sifting).
struct TimerHeap {
    private struct Key {
        /// The timer's deadline, as the time since `TimerHeap.origin`.
        var deadline: Duration
        /// `deadline` plus the timer's leeway: the latest moment it may fire.
        var latest: Duration
        /// Breaks ties between equal deadlines (earlier armings fire first); for a re-armable timer, also which of
        /// its armings this entry is.
        var sequence: UInt64

        @inline(__always)
        func firesBefore(_ other: Key) -> Bool {
            self.deadline < other.deadline || (self.deadline == other.deadline && self.sequence < other.sequence)
        }
    }

    /// Where the keys' durations count from (any fixed instant: only differences matter).
    private static let origin = ContinuousClock.now

    private var keys: [Key] = []
    private var entries: [TimerEntry] = []

    /// The timers in the heap, cancelled one-shot timers not yet dropped included.
    var count: Int { self.keys.count }

    /// Adds a one-shot timer.
    mutating func push(_ timer: ScheduledTimer) {
        let deadline = Self.origin.duration(to: timer.deadline)
        self.append(Key(deadline: deadline, latest: deadline + timer.leeway, sequence: timer.sequence), .once(timer))
    }

    /// Arms a re-armable timer for `deadline` (at most `leeway` later), as its arming `sequence`: its entry moves in
    /// place when it has one, else it gets one.
    mutating func place(
        _ timer: LoopTimer, at deadline: ContinuousClock.Instant, leeway: Duration, sequence: UInt64
    ) {
        let offset = Self.origin.duration(to: deadline)
        let key = Key(deadline: offset, latest: offset + max(leeway, .zero), sequence: sequence)
        let index = timer.heapIndex.load(ordering: .relaxed)
        guard index >= 0 else { return self.append(key, .rearmable(timer)) }
        let earlier = key.firesBefore(self.keys[index])
        self.keys[index] = key
        self.withBuffers { keys, entries in
            if earlier {
                Self.siftUp(index, &keys, &entries)
            } else {
                Self.siftDown(index, &keys, &entries)
            }
        }
    }

    /// Takes a re-armable timer's entry out, if it has one.
    mutating func remove(_ timer: LoopTimer) {
        let index = timer.heapIndex.load(ordering: .relaxed)
        guard index >= 0 else { return }
        _ = self.remove(at: index)
    }

    /// The earliest deadline of a timer that has not been cancelled, dropping cancelled ones on the way; nil when
    /// none is pending.
    mutating func earliestDeadline() -> ContinuousClock.Instant? {
        self.dropCancelled() ? Self.origin + self.keys[0].deadline : nil
    }

    /// Takes out the earliest pending timer if its deadline is `now` or earlier, with its arming's sequence (for
    /// `TimerEntry.fire(sequence:)`), dropping cancelled ones on the way.
    mutating func popDue(by now: ContinuousClock.Instant) -> (entry: TimerEntry, sequence: UInt64)? {
        guard self.dropCancelled(), self.keys[0].deadline <= Self.origin.duration(to: now) else { return nil }
        let sequence = self.keys[0].sequence
        return (self.remove(at: 0), sequence)
    }

    /// When the loop must wake up for its timers: the earliest `latest` among the timers due before the first
    /// pending timer's `latest`, so that every timer fires within its leeway while timers close together share
    /// one wake-up. Only that window of the heap is visited (a subtree whose root is due later is skipped whole).
    /// A cancelled timer inside the window may make the wake-up a little early; that costs nothing but the
    /// wake-up. `nil` when no timer is pending.
    mutating func wakeTime() -> ContinuousClock.Instant? {
        guard self.dropCancelled() else { return nil }
        let wake = self.keys.withUnsafeBufferPointer { heap in
            var wake = heap[0].latest
            guard wake > heap[0].deadline else { return wake }
            func visit(_ index: Int) {
                guard index < heap.count, heap[index].deadline < wake else { return }
                if heap[index].latest < wake { wake = heap[index].latest }
                visit(2 * index + 1)
                visit(2 * index + 2)
            }
            visit(1)
            visit(2)
            return wake
        }
        return Self.origin + wake
    }

    /// Every timer leaves: one-shot ones are cancelled, re-armable ones disarmed.
    mutating func removeAll() {
        for entry in self.entries {
            switch entry {
            case .once(let timer):
                _ = timer.take()
            case .rearmable(let timer):
                timer.armedSequence.store(0, ordering: .relaxed)
                timer.heapIndex.store(-1, ordering: .relaxed)
            }
        }
        self.keys.removeAll()
        self.entries.removeAll()
    }

    // MARK: - Heap

    /// Whether the top entry is pending, after dropping the cancelled ones above it.
    private mutating func dropCancelled() -> Bool {
        while !self.keys.isEmpty {
            switch self.entries[0] {
            case .once(let timer):
                if timer.isPending { return true }
            case .rearmable(let timer):
                if timer.armedSequence.load(ordering: .relaxed) == self.keys[0].sequence { return true }
            }
            _ = self.remove(at: 0)
        }
        return false
    }

    private mutating func append(_ key: Key, _ entry: TimerEntry) {
        self.keys.append(key)
        self.entries.append(entry)
        Self.noteIndex(self.entries.count - 1, of: entry)
        self.withBuffers { keys, entries in Self.siftUp(keys.count - 1, &keys, &entries) }
    }

    /// Removes the entry at `index`: the last one takes its place and moves to where it belongs.
    private mutating func remove(at index: Int) -> TimerEntry {
        let last = self.keys.count - 1
        self.withBuffers { keys, entries in
            if index != last {
                keys.swapAt(index, last)
                entries.swapAt(index, last)
            }
        }
        self.keys.removeLast()
        let removed = self.entries.removeLast()
        if case .rearmable(let timer) = removed { timer.heapIndex.store(-1, ordering: .relaxed) }
        guard index < last else { return removed }
        Self.noteIndex(index, of: self.entries[index])
        self.withBuffers { keys, entries in
            if index > 0, keys[index].firesBefore(keys[(index - 1) / 2]) {
                Self.siftUp(index, &keys, &entries)
            } else {
                Self.siftDown(index, &keys, &entries)
            }
        }
        return removed
    }

    private static func siftUp(
        _ start: Int, _ keys: inout UnsafeMutableBufferPointer<Key>,
        _ entries: inout UnsafeMutableBufferPointer<TimerEntry>
    ) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard keys[child].firesBefore(keys[parent]) else { break }
            Self.swap(child, parent, &keys, &entries)
            child = parent
        }
    }

    private static func siftDown(
        _ start: Int, _ keys: inout UnsafeMutableBufferPointer<Key>,
        _ entries: inout UnsafeMutableBufferPointer<TimerEntry>
    ) {
        var parent = start
        let count = keys.count
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < count, keys[left].firesBefore(keys[smallest]) { smallest = left }
            if right < count, keys[right].firesBefore(keys[smallest]) { smallest = right }
            guard smallest != parent else { break }
            Self.swap(parent, smallest, &keys, &entries)
            parent = smallest
        }
    }

    @inline(__always)
    private static func swap(
        _ a: Int, _ b: Int, _ keys: inout UnsafeMutableBufferPointer<Key>,
        _ entries: inout UnsafeMutableBufferPointer<TimerEntry>
    ) {
        keys.swapAt(a, b)
        entries.swapAt(a, b)
        Self.noteIndex(a, of: entries[a])
        Self.noteIndex(b, of: entries[b])
    }

    /// A re-armable timer's entry is now at `index`.
    @inline(__always)
    private static func noteIndex(_ index: Int, of entry: TimerEntry) {
        if case .rearmable(let timer) = entry { timer.heapIndex.store(index, ordering: .relaxed) }
    }

    /// Both arrays' storage, for sifting: swapping in a buffer moves a timer without retaining or releasing it.
    private mutating func withBuffers(
        _ body: (inout UnsafeMutableBufferPointer<Key>, inout UnsafeMutableBufferPointer<TimerEntry>) -> Void
    ) {
        self.keys.withUnsafeMutableBufferPointer { keys in
            self.entries.withUnsafeMutableBufferPointer { entries in body(&keys, &entries) }
        }
    }
}
#endif
