import Synchronization
import Tether
import TetherCore

/// Keeps everything a client reports and lets a test wait for what it expects, without sleeping or polling.
///
/// A task reads the client's `events` from the moment the recorder is made: the recorder is their reader (a later
/// iterator of `events` would take over from it, and the recorder would see the end). Every event re-checks the
/// waiting calls. A wait's `timeout` is only a guard that turns a
/// missing event into a failed expectation (nil) instead of a hung test; a wait normally ends on the event
/// itself. A cancelled wait returns nil at once.
///
/// ```swift
/// let recorder = EventRecorder(client.events)
/// await client.start()
/// let open = await recorder.state(.open)
/// let pong = await recorder.record(.pong)                       // the next pong record after that
/// let all = await recorder.wait { $0.records.count { $0.kind == .closed } == 1 }
/// ```
///
/// Two ways to wait: `next(where:)` (and `record`, `state`, `message` built on it) reads forward from where
/// the previous `next` stopped, skipping events that do not match; `wait(until:)` looks at everything
/// recorded so far and returns as soon as a condition over it holds.
public final class EventRecorder: Sendable {
    /// Everything recorded so far.
    public struct Snapshot: Sendable {
        /// Every event, in the order the client reported them.
        public fileprivate(set) var events: [WebSocketEvent] = []
        /// The `.record` events' log records, in order.
        public fileprivate(set) var records: [LogRecord] = []
        /// The `.message` events' messages, in order.
        public fileprivate(set) var messages: [WebSocketMessage] = []
        /// Whether the client's event stream has finished (no more events will come).
        public fileprivate(set) var isFinished = false

        fileprivate mutating func append(_ event: WebSocketEvent) {
            self.events.append(event)
            switch event {
            case .record(let record): self.records.append(record)
            case .message(let message, _): self.messages.append(message)
            case .stateChanged, .roundTrip, .outboxDropped, .unconfirmed, .delivery: break
            }
        }
    }

    private enum Wait {
        /// `next`: the first event after the cursor that matches.
        case next(@Sendable (WebSocketEvent) -> Bool, CheckedContinuation<WebSocketEvent?, Never>)
        /// `wait(until:)`: the whole snapshot satisfies the condition.
        case until(@Sendable (Snapshot) -> Bool, CheckedContinuation<Snapshot?, Never>)

        var isNext: Bool {
            if case .next = self { return true }
            return false
        }

        func resumeEmpty() {
            switch self {
            case .next(_, let continuation): continuation.resume(returning: nil)
            case .until(_, let continuation): continuation.resume(returning: nil)
            }
        }
    }

    private struct Waiter {
        var wait: Wait
        var guardTask: Task<Void, Never>?
    }

    private struct State {
        var snapshot = Snapshot()
        /// How many events `next` has read past.
        var cursor = 0
        var waiters: [Int: Waiter] = [:]
        var nextID = 0

        /// Resumes every waiter that is now satisfied (or, once finished, every waiter): the returned closures
        /// run outside the lock.
        mutating func settle() -> [() -> Void] {
            var ready: [() -> Void] = []
            for (id, waiter) in self.waiters {
                switch waiter.wait {
                case .next(let matches, let continuation):
                    var found: WebSocketEvent?
                    while found == nil, self.cursor < self.snapshot.events.count {
                        let event = self.snapshot.events[self.cursor]
                        self.cursor += 1
                        if matches(event) { found = event }
                    }
                    guard found != nil || self.snapshot.isFinished else { continue }
                    ready.append { [found] in continuation.resume(returning: found) }
                case .until(let condition, let continuation):
                    if condition(self.snapshot) {
                        ready.append { [snapshot = self.snapshot] in continuation.resume(returning: snapshot) }
                    } else if self.snapshot.isFinished {
                        ready.append { continuation.resume(returning: nil) }
                    } else {
                        continue
                    }
                }
                self.waiters[id] = nil
                if let guardTask = waiter.guardTask { ready.append { guardTask.cancel() } }
            }
            return ready
        }
    }

    private final class Storage: Sendable {
        let state = Mutex(State())

        func record(_ event: WebSocketEvent?) {
            let ready = self.state.withLock { state in
                if let event { state.snapshot.append(event) } else { state.snapshot.isFinished = true }
                return state.waiters.isEmpty ? [] : state.settle()
            }
            for resume in ready { resume() }
        }

        /// Ends wait `id` with nothing (timeout or cancellation), if it is still waiting.
        func expire(_ id: Int) {
            let waiter = self.state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.guardTask?.cancel()
            waiter?.wait.resumeEmpty()
        }
    }

    private let storage = Storage()
    private let reader: Task<Void, Never>

    /// Starts reading `events` (a client's `events`, or any sequence of events a test makes) at once.
    public init(_ events: some AsyncSequence<WebSocketEvent, Never> & Sendable) {
        let storage = self.storage
        self.reader = Task {
            for await event in events {
                storage.record(event)
            }
            storage.record(nil)
        }
    }

    deinit {
        self.reader.cancel()
    }

    /// Everything recorded so far.
    public var snapshot: Snapshot { self.storage.state.withLock { $0.snapshot } }
    /// Every event recorded so far.
    public var events: [WebSocketEvent] { self.snapshot.events }
    /// Every log record recorded so far.
    public var records: [LogRecord] { self.snapshot.records }

    // MARK: Reading forward

    /// The next event after the ones `next` already passed that matches; the ones before it that do not match
    /// are passed over. Nil when the stream finished first, after `timeout`, or when the task is cancelled.
    /// One `next` (or `record`, `state`, `message`) at a time: they share one position.
    public func next(
        timeout: Duration = .seconds(10), where matches: @escaping @Sendable (WebSocketEvent) -> Bool
    ) async -> WebSocketEvent? {
        await self.waitFor(timeout: timeout) { continuation in .next(matches, continuation) }
    }

    /// The next log record of `kind` (that also satisfies `extra`).
    public func record(
        _ kind: LogRecord.Kind,
        timeout: Duration = .seconds(10),
        where extra: @escaping @Sendable (LogRecord) -> Bool = { _ in true }
    ) async -> LogRecord? {
        let event = await self.next(timeout: timeout) { event in
            if case .record(let record) = event { return record.kind == kind && extra(record) }
            return false
        }
        guard case .record(let record)? = event else { return nil }
        return record
    }

    /// The next state change into `phase`.
    public func state(_ phase: SessionPhase, timeout: Duration = .seconds(10)) async -> ConnectionState? {
        let event = await self.next(timeout: timeout) { event in
            if case .stateChanged(let state, _) = event { return state.phase == phase }
            return false
        }
        guard case .stateChanged(let state, _)? = event else { return nil }
        return state
    }

    /// The next message.
    public func message(timeout: Duration = .seconds(10)) async -> WebSocketMessage? {
        let event = await self.next(timeout: timeout) { event in
            if case .message = event { return true }
            return false
        }
        guard case .message(let message, _)? = event else { return nil }
        return message
    }

    // MARK: Waiting for a condition

    /// Waits until `condition` holds for everything recorded so far: checked now and after every event.
    /// Returns the snapshot that satisfied it; nil when the stream finished without it, after `timeout` (at once for
    /// `.zero`), or when the task is cancelled. The condition runs under the recorder's lock: keep it quick.
    @discardableResult
    public func wait(
        timeout: Duration = .seconds(10), until condition: @escaping @Sendable (Snapshot) -> Bool
    ) async -> Snapshot? {
        await self.waitFor(timeout: timeout) { continuation in .until(condition, continuation) }
    }

    /// Registers a wait, settles it at once if it can, and otherwise arms its timeout guard.
    private func waitFor<Value: Sendable>(
        timeout: Duration, _ make: @escaping (CheckedContinuation<Value?, Never>) -> Wait
    ) async -> Value? {
        let storage = self.storage
        let id = storage.state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Value?, Never>) in
                let wait = make(continuation)
                let (ready, waiting) = storage.state.withLock { state -> ([() -> Void], Bool) in
                    let nextWaiting = state.waiters.values.contains { $0.wait.isNext }
                    precondition(!(wait.isNext && nextWaiting), "EventRecorder: one next() at a time")
                    state.waiters[id] = Waiter(wait: wait)
                    let ready = state.settle()
                    return (ready, state.waiters[id] != nil)
                }
                for resume in ready { resume() }
                guard waiting else { return }  // settled by what was already recorded
                // A zero timeout asks about now: not settled by what was recorded, it is not settled (no guard task,
                // whose wake-up a busy pool could delay past events that come later).
                guard timeout > .zero else { return storage.expire(id) }
                // Armed after registering, so that neither the guard nor a cancellation can miss the waiter.
                let guardTask = Task {
                    try? await Task.sleep(for: timeout)
                    storage.expire(id)
                }
                let armed = storage.state.withLock { state -> Bool in
                    guard state.waiters[id] != nil else { return false }
                    state.waiters[id]?.guardTask = guardTask
                    return true
                }
                if !armed { guardTask.cancel() }
                if Task.isCancelled { storage.expire(id) }
            }
        } onCancel: {
            storage.expire(id)
        }
    }
}
