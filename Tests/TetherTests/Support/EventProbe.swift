import Synchronization
import Tether
import TetherCore

/// Collects a client's events on a background task so that a test can wait for the one it expects.
/// Waiting is on explicit signals: each event resumes the waiters; nothing sleeps or polls.
final class EventProbe: Sendable {
    private struct Waiter {
        var id: Int
        var matches: @Sendable (WebSocketEvent) -> Bool
        var continuation: CheckedContinuation<WebSocketEvent?, Never>
    }

    private struct State {
        var seen: [WebSocketEvent] = []
        var consumed = 0
        var finished = false
        var waiter: Waiter?
        var nextWaiterID = 0
    }

    private final class Storage: Sendable {
        let mutex = Mutex(State())
    }

    private let storage = Storage()
    private let reader: Task<Void, Never>

    init(_ events: AsyncStream<WebSocketEvent>) {
        let storage = self.storage
        self.reader = Task {
            for await event in events {
                let match = storage.mutex.withLock { state -> (Waiter, WebSocketEvent)? in
                    state.seen.append(event)
                    return Self.takeMatch(&state)
                }
                match?.0.continuation.resume(returning: match?.1)
            }
            let waiter = storage.mutex.withLock { state -> Waiter? in
                state.finished = true
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.continuation.resume(returning: nil)
        }
    }

    deinit { self.reader.cancel() }

    /// Every event seen so far.
    var all: [WebSocketEvent] { self.storage.mutex.withLock { $0.seen } }

    /// Every log record seen so far.
    var records: [LogRecord] {
        self.all.compactMap { if case .record(let record) = $0 { record } else { nil } }
    }

    /// Waits for the next event (after the ones already returned) that matches; earlier non-matching
    /// events are skipped. Returns nil if the stream finished first, or after `timeout` — a guard that turns
    /// a missing event into a failed expectation instead of a hung test, not a synchronisation sleep.
    func next(
        timeout: Duration = .seconds(10), where matches: @escaping @Sendable (WebSocketEvent) -> Bool
    ) async -> WebSocketEvent? {
        let id = self.storage.mutex.withLock { state in
            state.nextWaiterID += 1
            return state.nextWaiterID
        }
        let guardTask = Task { [storage = self.storage] in
            try? await Task.sleep(for: timeout)
            let expired = storage.mutex.withLock { state -> Waiter? in
                guard let waiter = state.waiter, waiter.id == id else { return nil }
                state.waiter = nil
                return waiter
            }
            expired?.continuation.resume(returning: nil)
        }
        defer { guardTask.cancel() }
        return await withCheckedContinuation { continuation in
            let immediate = self.storage.mutex.withLock { state -> (Waiter, WebSocketEvent?)? in
                precondition(state.waiter == nil, "one waiter at a time")
                let waiter = Waiter(id: id, matches: matches, continuation: continuation)
                state.waiter = waiter
                if let (waiter, event) = Self.takeMatch(&state) { return (waiter, event) }
                guard state.finished else { return nil }
                state.waiter = nil
                return (waiter, nil)
            }
            if let (waiter, event) = immediate { waiter.continuation.resume(returning: event) }
        }
    }

    /// Waits until every record seen so far (consumed or not) satisfies `condition`, checking again after each
    /// new event; returns those records, or nil when the stream finished or `timeout` passed first (a guard for
    /// a failing test, also when events keep coming without ever satisfying it).
    /// Use it when the order of independent events (a path update and an open) is not fixed.
    func waitForRecords(
        timeout: Duration = .seconds(10), where condition: @escaping @Sendable ([LogRecord]) -> Bool
    ) async -> [LogRecord]? {
        let deadline = ContinuousClock.now + timeout
        while true {
            let records = self.records
            if condition(records) { return records }
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero, await self.next(timeout: remaining, where: { _ in true }) != nil else {
                return nil
            }
        }
    }

    /// Waits for the next record of `kind` (optionally also matching `extra`).
    func record(
        _ kind: LogRecord.Kind, where extra: @escaping @Sendable (LogRecord) -> Bool = { _ in true }
    ) async -> LogRecord? {
        let event = await self.next { event in
            if case .record(let record) = event { return record.kind == kind && extra(record) }
            return false
        }
        if case .record(let record)? = event { return record }
        return nil
    }

    /// Waits for the next state change into `phase`.
    func state(_ phase: SessionPhase) async -> ConnectionState? {
        let event = await self.next { event in
            if case .stateChanged(let state, _) = event { return state.phase == phase }
            return false
        }
        if case .stateChanged(let state, _)? = event { return state }
        return nil
    }

    /// Scans unconsumed events for the waiter's match; on a match consumes up to it and hands back both.
    private static func takeMatch(_ state: inout State) -> (Waiter, WebSocketEvent)? {
        guard let waiter = state.waiter else { return nil }
        while state.consumed < state.seen.count {
            let event = state.seen[state.consumed]
            state.consumed += 1
            if waiter.matches(event) {
                state.waiter = nil
                return (waiter, event)
            }
        }
        return nil
    }
}
