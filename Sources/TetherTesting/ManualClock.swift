import Synchronization

/// A clock that moves only when a test advances it: a `WebSocketClient` driven by it sends its pings, times out
/// its pongs and waits out its retries exactly when the test says, with no real time passing.
///
/// ```swift
/// let clock = ManualClock()
/// let client = try WebSocketClient(configuration: configuration, clock: clock)
/// clock.advance(by: .seconds(15))          // the heartbeat interval: the client sends its ping now
/// ```
///
/// Sleepers wake in deadline order, on the thread that advances the clock. A sleep whose deadline has already
/// come returns at once, so advancing before or after the client arms its timer comes to the same: nothing ever
/// needs a real sleep or a yield to settle.
public final class ManualClock: Clock, Sendable {
    /// A point in the manual clock's time: how far it is from the clock's origin.
    public struct Instant: InstantProtocol {
        /// The time since the clock's origin (zero when the clock was made).
        public var offset: Duration

        public init(offset: Duration) {
            self.offset = offset
        }

        public func advanced(by duration: Duration) -> Instant { Instant(offset: self.offset + duration) }
        public func duration(to other: Instant) -> Duration { other.offset - self.offset }
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private struct Sleeper {
        var id: Int
        var deadline: Instant
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now = Instant(offset: .zero)
        var sleepers: [Sleeper] = []
        var nextID = 0
    }

    private let state = Mutex(State())

    /// A clock at its origin (`now.offset == .zero`) with nobody sleeping.
    public init() {}

    public var now: Instant { self.state.withLock { $0.now } }
    public var minimumResolution: Duration { .zero }

    /// How many sleeps are waiting for the clock to reach their deadline.
    public var sleeperCount: Int { self.state.withLock { $0.sleepers.count } }

    /// The earliest deadline a sleeper waits for, or nil when nobody sleeps.
    public var nextDeadline: Instant? { self.state.withLock { $0.sleepers.map(\.deadline).min() } }

    /// Suspends until the clock is advanced to `deadline` (at once if it is there already); throws
    /// `CancellationError` when the task is cancelled first.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let id = self.state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let resumeNow: Bool = self.state.withLock { state in
                    if deadline <= state.now || Task.isCancelled { return true }
                    state.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let cancelled = self.state.withLock { state -> Sleeper? in
                guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else { return nil }
                return state.sleepers.remove(at: index)
            }
            cancelled?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves time forward by `duration` and wakes every sleeper whose deadline has come, earliest first.
    public func advance(by duration: Duration) {
        precondition(duration >= .zero, "a manual clock never goes back")
        let due = self.state.withLock { state -> [Sleeper] in
            state.now = state.now.advanced(by: duration)
            let now = state.now
            let due = state.sleepers.filter { $0.deadline <= now }.sorted { $0.deadline < $1.deadline }
            state.sleepers.removeAll { $0.deadline <= now }
            return due
        }
        for sleeper in due {
            sleeper.continuation.resume()
        }
    }

    /// Moves time to `milliseconds` after the clock's origin (never back).
    public func advance(toMilliseconds milliseconds: Int) {
        let target = Duration.milliseconds(milliseconds)
        let current = self.now.offset
        precondition(target >= current, "a manual clock never goes back")
        self.advance(by: target - current)
    }
}
