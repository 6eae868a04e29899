import Synchronization

/// One scheduled piece of work. Whoever takes `work` first — the loop firing it or `cancel` —
/// decides its fate, so a cancelled timer never runs and a fired one is never "cancelled".
final class ScheduledTimer: Sendable {
    let deadline: ContinuousClock.Instant
    /// How much later than `deadline` the timer may fire, so that the loop can fire timers that are close
    /// together on one wake-up.
    let leeway: Duration
    /// Breaks ties between equal deadlines: earlier `schedule` calls fire first.
    let sequence: UInt64
    private let work: Mutex<(@Sendable () -> Void)?>

    init(
        deadline: ContinuousClock.Instant, leeway: Duration = .zero, sequence: UInt64,
        work: @escaping @Sendable () -> Void
    ) {
        self.deadline = deadline
        self.leeway = max(leeway, .zero)
        self.sequence = sequence
        self.work = Mutex(work)
    }

    /// Takes the work out; `nil` if it was already taken (fired or cancelled).
    func take() -> (@Sendable () -> Void)? {
        self.work.withLock { work in
            let taken = work
            work = nil
            return taken
        }
    }

    var isPending: Bool { self.work.withLock { $0 != nil } }

    func firesBefore(_ other: ScheduledTimer) -> Bool {
        (self.deadline, self.sequence) < (other.deadline, other.sequence)
    }
}

/// A timer scheduled with `EventLoop.schedule`. Cancel it from any thread.
package struct TimerHandle: Hashable, Sendable {
    let timer: ScheduledTimer

    /// When the timer fires (or would have).
    package var deadline: ContinuousClock.Instant { self.timer.deadline }

    /// Prevents the work from running and releases it. Returns `true` if this call stopped it,
    /// `false` if it already ran, is running, or was cancelled before.
    @discardableResult
    package func cancel() -> Bool {
        self.timer.take() != nil
    }

    package static func == (lhs: TimerHandle, rhs: TimerHandle) -> Bool { lhs.timer === rhs.timer }
    package func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self.timer)) }
}

/// A binary min-heap of timers ordered by (deadline, sequence). Cancelled timers stay until they
/// reach the top and are dropped there; their work closure is already released by `cancel`.
///
/// The ordering keys live in an array of plain values beside the array of timers, so sifting compares and
/// moves trivial values, and the timers are moved in memory without being retained or released. A key holds its
/// instants as `Duration`s since a fixed origin: `ContinuousClock.Instant` is not frozen, so outside the standard
/// library every copy of a key holding one went through its value witnesses (a profile of 10,000 heartbeating
/// connections put a tenth of the loop's time in sifting).
struct TimerHeap {
    private struct Key {
        /// The timer's deadline, as the time since `TimerHeap.origin`.
        let deadline: Duration
        /// `deadline` plus the timer's leeway: the latest moment it may fire.
        let latest: Duration
        let sequence: UInt64

        @inline(__always)
        func firesBefore(_ other: Key) -> Bool {
            self.deadline < other.deadline || (self.deadline == other.deadline && self.sequence < other.sequence)
        }
    }

    /// Where the keys' durations count from (any fixed instant: only differences matter).
    private static let origin = ContinuousClock.now

    private var keys: [Key] = []
    private var timers: [ScheduledTimer] = []

    mutating func push(_ timer: ScheduledTimer) {
        let deadline = Self.origin.duration(to: timer.deadline)
        self.keys.append(Key(deadline: deadline, latest: deadline + timer.leeway, sequence: timer.sequence))
        self.timers.append(timer)
        self.withBuffers { keys, timers in
            var child = keys.count - 1
            while child > 0 {
                let parent = (child - 1) / 2
                guard keys[child].firesBefore(keys[parent]) else { break }
                keys.swapAt(child, parent)
                timers.swapAt(child, parent)
                child = parent
            }
        }
    }

    /// The earliest timer that has not been cancelled, dropping cancelled ones on the way.
    mutating func peekPending() -> ScheduledTimer? {
        while let first = self.timers.first {
            if first.isPending { return first }
            self.popFirst()
        }
        return nil
    }

    /// When the loop must wake up for its timers: the earliest `latest` among the timers due before the first
    /// pending timer's `latest`, so that every timer fires within its leeway while timers close together share
    /// one wake-up. Only that window of the heap is visited (a subtree whose root is due later is skipped whole).
    /// A cancelled timer inside the window may make the wake-up a little early; that costs nothing but the
    /// wake-up. `nil` when no timer is pending.
    mutating func wakeTime() -> ContinuousClock.Instant? {
        guard self.peekPending() != nil else { return nil }
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

    @discardableResult
    mutating func popFirst() -> ScheduledTimer? {
        guard !self.keys.isEmpty else { return nil }
        self.withBuffers { keys, timers in
            keys.swapAt(0, keys.count - 1)
            timers.swapAt(0, timers.count - 1)
        }
        self.keys.removeLast()
        let first = self.timers.removeLast()
        self.withBuffers { keys, timers in
            var parent = 0
            let count = keys.count
            while true {
                let left = 2 * parent + 1
                let right = left + 1
                var smallest = parent
                if left < count, keys[left].firesBefore(keys[smallest]) { smallest = left }
                if right < count, keys[right].firesBefore(keys[smallest]) { smallest = right }
                guard smallest != parent else { break }
                keys.swapAt(parent, smallest)
                timers.swapAt(parent, smallest)
                parent = smallest
            }
        }
        return first
    }

    /// Both arrays' storage, for sifting: swapping in a buffer moves a timer without retaining or releasing it.
    private mutating func withBuffers(
        _ body: (inout UnsafeMutableBufferPointer<Key>, inout UnsafeMutableBufferPointer<ScheduledTimer>) -> Void
    ) {
        self.keys.withUnsafeMutableBufferPointer { keys in
            self.timers.withUnsafeMutableBufferPointer { timers in body(&keys, &timers) }
        }
    }

    mutating func removeAll() {
        for timer in self.timers { _ = timer.take() }
        self.keys.removeAll()
        self.timers.removeAll()
    }
}
