#if os(Linux)
import Synchronization
import TetherPOSIX

/// The server's records, shared between its loop thread (which writes) and tests (which read and
/// wait). Waiters and event subscribers are resumed when a change is recorded — never by polling.
final class Recorder: Sendable {
    typealias Condition = @Sendable ([ConnectionRecord]) -> Bool
    typealias WaitResult = Result<[ConnectionRecord], TestServerError>

    private let start: ContinuousClock.Instant
    private let loop: EventLoop
    let recordedMessageLimit: Int
    private let state: Mutex<State>

    private struct Waiter {
        let condition: Condition
        let continuation: CheckedContinuation<WaitResult, Never>
        var timeout: TimerHandle?
    }

    private struct State {
        var records: [ConnectionRecord] = []
        var waiters: [UInt64: Waiter] = [:]
        /// Waits cancelled before they were registered.
        var cancelledWaits: Set<UInt64> = []
        var subscribers: [UInt64: AsyncStream<ServerEvent>.Continuation] = [:]
        var nextID: UInt64 = 0
        var isStopped = false
    }

    init(start: ContinuousClock.Instant, loop: EventLoop, recordedMessageLimit: Int) {
        self.start = start
        self.loop = loop
        self.recordedMessageLimit = recordedMessageLimit
        self.state = Mutex(State())
    }

    /// Milliseconds since the server started.
    func now() -> Int {
        let (seconds, attoseconds) = (ContinuousClock.now - self.start).components
        return Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000)
    }

    var records: [ConnectionRecord] { self.state.withLock { $0.records } }

    // MARK: Recording (loop thread)

    /// Adds the record of a newly accepted connection and returns its index (from 1).
    func addConnection() -> Int {
        let now = self.now()
        return self.change { state in
            let index = state.records.count + 1
            state.records.append(ConnectionRecord(index: index, acceptedAt: now))
            return (index, ServerEvent(connection: index, at: now, kind: .connected))
        }
    }

    /// Changes connection `index`'s record; `body` returns the event to publish, if any.
    func update(_ index: Int, _ body: (inout ConnectionRecord, _ now: Int) -> ServerEvent.Kind?) {
        let now = self.now()
        self.change { state in
            let kind = body(&state.records[index - 1], now)
            return ((), kind.map { ServerEvent(connection: index, at: now, kind: $0) })
        }
    }

    /// Applies a change under the lock, then (outside it) publishes the event and resumes the
    /// waiters whose condition now holds.
    private func change<Value>(_ body: (inout State) -> (Value, ServerEvent?)) -> Value {
        var satisfied: [(CheckedContinuation<WaitResult, Never>, TimerHandle?)] = []
        var subscribers: [AsyncStream<ServerEvent>.Continuation] = []
        var snapshot: [ConnectionRecord] = []
        let (value, event) = self.state.withLock { state in
            let (value, event) = body(&state)
            if event != nil, !state.subscribers.isEmpty { subscribers = Array(state.subscribers.values) }
            if !state.waiters.isEmpty {
                for (id, waiter) in state.waiters where waiter.condition(state.records) {
                    state.waiters[id] = nil
                    satisfied.append((waiter.continuation, waiter.timeout))
                }
                if !satisfied.isEmpty { snapshot = state.records }
            }
            return (value, event)
        }
        if let event { for subscriber in subscribers { subscriber.yield(event) } }
        for (continuation, timeout) in satisfied {
            timeout?.cancel()
            continuation.resume(returning: .success(snapshot))
        }
        return value
    }

    // MARK: Waiting (any thread)

    func wait(timeout: Duration, until condition: @escaping Condition) async -> WaitResult {
        let id = self.state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                self.register(id, condition, continuation, timeout: timeout)
            }
        } onCancel: {
            self.finishWait(id, with: .cancelled, markCancelled: true)
        }
    }

    private func register(
        _ id: UInt64,
        _ condition: @escaping Condition,
        _ continuation: CheckedContinuation<WaitResult, Never>,
        timeout: Duration
    ) {
        let immediate: WaitResult? = self.state.withLock { state in
            if state.cancelledWaits.remove(id) != nil { return .failure(.cancelled) }
            if condition(state.records) { return .success(state.records) }
            if state.isStopped { return .failure(.stopped) }
            state.waiters[id] = Waiter(condition: condition, continuation: continuation)
            return nil
        }
        if let immediate {
            continuation.resume(returning: immediate)
            return
        }
        let timer = self.loop.schedule(after: timeout) { [self] in self.finishWait(id, with: .timedOut(timeout)) }
        let stillWaiting = self.state.withLock { state in
            guard state.waiters[id] != nil else { return false }
            state.waiters[id]?.timeout = timer
            return true
        }
        if !stillWaiting { timer.cancel() }
    }

    private func finishWait(_ id: UInt64, with error: TestServerError, markCancelled: Bool = false) {
        let waiter = self.state.withLock { state in
            let waiter = state.waiters.removeValue(forKey: id)
            if waiter == nil, markCancelled { state.cancelledWaits.insert(id) }
            return waiter
        }
        guard let waiter else { return }
        waiter.timeout?.cancel()
        waiter.continuation.resume(returning: .failure(error))
    }

    // MARK: Events

    func events() -> AsyncStream<ServerEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: ServerEvent.self)
        let registered = self.state.withLock { state in
            guard !state.isStopped else { return false }
            state.nextID += 1
            let id = state.nextID
            state.subscribers[id] = continuation
            continuation.onTermination = { [self] _ in
                _ = self.state.withLock { $0.subscribers.removeValue(forKey: id) }
            }
            return true
        }
        if !registered { continuation.finish() }
        return stream
    }

    // MARK: Stop

    /// Fails every remaining wait with `.stopped` (after a last look at the records) and finishes
    /// every event stream.
    func stop() {
        let (waiters, subscribers, records) = self.state.withLock { state in
            state.isStopped = true
            defer {
                state.waiters.removeAll()
                state.subscribers.removeAll()
            }
            return (Array(state.waiters.values), Array(state.subscribers.values), state.records)
        }
        for waiter in waiters {
            waiter.timeout?.cancel()
            waiter.continuation.resume(returning: waiter.condition(records) ? .success(records) : .failure(.stopped))
        }
        for subscriber in subscribers { subscriber.finish() }
    }
}
#endif
