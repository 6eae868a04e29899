import Synchronization

/// One scheduled piece of work. Whoever takes `work` first — the loop firing it or `cancel` —
/// decides its fate, so a cancelled timer never runs and a fired one is never "cancelled".
final class ScheduledTimer: Sendable {
    let deadline: ContinuousClock.Instant
    /// Breaks ties between equal deadlines: earlier `schedule` calls fire first.
    let sequence: UInt64
    private let work: Mutex<(@Sendable () -> Void)?>

    init(deadline: ContinuousClock.Instant, sequence: UInt64, work: @escaping @Sendable () -> Void) {
        self.deadline = deadline
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
public struct TimerHandle: Hashable, Sendable {
    let timer: ScheduledTimer

    /// When the timer fires (or would have).
    public var deadline: ContinuousClock.Instant { self.timer.deadline }

    /// Prevents the work from running and releases it. Returns `true` if this call stopped it,
    /// `false` if it already ran, is running, or was cancelled before.
    @discardableResult
    public func cancel() -> Bool {
        self.timer.take() != nil
    }

    public static func == (lhs: TimerHandle, rhs: TimerHandle) -> Bool { lhs.timer === rhs.timer }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self.timer)) }
}

/// A binary min-heap of timers ordered by (deadline, sequence). Cancelled timers stay until they
/// reach the top and are dropped there; their work closure is already released by `cancel`.
struct TimerHeap {
    private var storage: [ScheduledTimer] = []

    var isEmpty: Bool { self.storage.isEmpty }
    var count: Int { self.storage.count }

    mutating func push(_ timer: ScheduledTimer) {
        self.storage.append(timer)
        var child = self.storage.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard self.storage[child].firesBefore(self.storage[parent]) else { break }
            self.storage.swapAt(child, parent)
            child = parent
        }
    }

    /// The earliest timer that has not been cancelled, dropping cancelled ones on the way.
    mutating func peekPending() -> ScheduledTimer? {
        while let first = self.storage.first {
            if first.isPending { return first }
            self.popFirst()
        }
        return nil
    }

    @discardableResult
    mutating func popFirst() -> ScheduledTimer? {
        guard !self.storage.isEmpty else { return nil }
        self.storage.swapAt(0, self.storage.count - 1)
        let first = self.storage.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < self.storage.count, self.storage[left].firesBefore(self.storage[smallest]) { smallest = left }
            if right < self.storage.count, self.storage[right].firesBefore(self.storage[smallest]) { smallest = right }
            guard smallest != parent else { break }
            self.storage.swapAt(parent, smallest)
            parent = smallest
        }
        return first
    }

    mutating func removeAll() {
        for timer in self.storage { _ = timer.take() }
        self.storage.removeAll()
    }
}
