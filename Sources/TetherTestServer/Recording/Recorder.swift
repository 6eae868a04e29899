#if os(Linux)
import Synchronization
import TetherPOSIX

/// The server's records, shared between its loop thread (which writes) and tests (which read and
/// wait). Waiters and event subscribers are resumed when a change is recorded — never by polling.
///
/// Bounded whatever the peers do: each list of a connection keeps at most `recordLimit` records (see
/// `RecordList`), at most `endedConnectionLimit` ended connections are kept (the ones that ended last),
/// and an event stream holds at most its buffer limit of unread events; what is not kept is counted.
final class Recorder: Sendable {
    typealias Condition = @Sendable ([ConnectionRecord]) -> Bool
    typealias WaitResult = Result<[ConnectionRecord], TestServerError>

    private let start: ContinuousClock.Instant
    private let loop: EventLoop
    /// How many records each list of a connection keeps.
    let recordLimit: Int
    /// How many ended connections' records are kept.
    let endedConnectionLimit: Int
    private let state: Mutex<State>
    /// Events dropped from streams whose reader fell behind by more than their buffer.
    private let droppedEvents = Atomic<Int>(0)

    private struct Waiter {
        let condition: Condition
        let continuation: CheckedContinuation<WaitResult, Never>
        var timeout: Task<Void, Never>?
    }

    private struct State {
        /// Every live connection and the last ended ones, in order of acceptance (by `index`).
        var records: [ConnectionRecord] = []
        var acceptedCount = 0
        /// Indices of the ended connections still in `records`, in the order they ended, from `endedHead`.
        var ended: [Int] = []
        var endedHead = 0
        var droppedConnections = 0
        var waiters: [UInt64: Waiter] = [:]
        /// Waits cancelled before they were registered.
        var cancelledWaits: Set<UInt64> = []
        var subscribers: [UInt64: AsyncStream<ServerEvent>.Continuation] = [:]
        var nextID: UInt64 = 0
        var isStopped = false
    }

    init(start: ContinuousClock.Instant, loop: EventLoop, recordLimit: Int, endedConnectionLimit: Int) {
        self.start = start
        self.loop = loop
        self.recordLimit = recordLimit
        self.endedConnectionLimit = endedConnectionLimit
        self.state = Mutex(State())
    }

    /// Milliseconds since the server started, on its loop's clock.
    func now() -> Int {
        let (seconds, attoseconds) = (self.loop.now - self.start).components
        return Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000)
    }

    var records: [ConnectionRecord] { self.state.withLock { $0.records } }

    /// Connections accepted so far, including those whose records were dropped.
    var acceptedCount: Int { self.state.withLock { $0.acceptedCount } }

    /// Ended connections whose records were dropped to keep at most `endedConnectionLimit`.
    var droppedConnectionCount: Int { self.state.withLock { $0.droppedConnections } }

    /// Events dropped from event streams whose reader fell behind.
    var droppedEventCount: Int { self.droppedEvents.load(ordering: .relaxed) }

    // MARK: Recording (loop thread)

    /// Adds the record of a newly accepted connection and returns its index (from 1).
    func addConnection(clientHost: String?) -> Int {
        let now = self.now()
        let limit = self.recordLimit
        return self.change { state in
            state.acceptedCount += 1
            let index = state.acceptedCount
            state.records.append(
                ConnectionRecord(index: index, acceptedAt: now, clientHost: clientHost, recordLimit: limit))
            return (index, ServerEvent(connection: index, at: now, kind: .connected))
        }
    }

    /// Changes connection `index`'s record; `body` returns the event to publish, if any. Once the
    /// record has an end, the oldest ended records beyond `endedConnectionLimit` are dropped.
    func update(_ index: Int, _ body: (inout ConnectionRecord, _ now: Int) -> ServerEvent.Kind?) {
        let now = self.now()
        let endedLimit = self.endedConnectionLimit
        self.change { state in
            // A live connection's record is never dropped, so it is there.
            guard let position = state.records.position(ofConnection: index) else { return ((), nil) }
            let hadEnded = state.records[position].hasEnded
            let kind = body(&state.records[position], now)
            if !hadEnded, state.records[position].hasEnded {
                Self.keepEnded(index, limit: endedLimit, in: &state)
            }
            return ((), kind.map { ServerEvent(connection: index, at: now, kind: $0) })
        }
    }

    /// Applies a change under the lock, then (outside it) publishes the event and resumes the
    /// waiters whose condition now holds.
    private func change<Value>(_ body: (inout State) -> (Value, ServerEvent?)) -> Value {
        var satisfied: [(CheckedContinuation<WaitResult, Never>, Task<Void, Never>?)] = []
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
        if let event {
            for subscriber in subscribers {
                if case .dropped = subscriber.yield(event) { self.droppedEvents.add(1, ordering: .relaxed) }
            }
        }
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
        // Real time, not the loop's clock: a wait's timeout is the test's safety net, also on a manual clock.
        let timer = Task { [self] in
            guard (try? await Task.sleep(for: timeout)) != nil else { return }
            self.finishWait(id, with: .timedOut(timeout))
        }
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

    /// A new stream of events that holds at most `bufferLimit` unread ones: beyond that the oldest
    /// unread are dropped (and counted in `droppedEventCount`).
    func events(bufferLimit: Int) -> AsyncStream<ServerEvent> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: ServerEvent.self, bufferingPolicy: .bufferingNewest(max(1, bufferLimit)))
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

    // MARK: Dropping ended records

    /// Notes that connection `index` ended, and drops the records of the connections that ended
    /// longest ago while more than `limit` ended ones are kept.
    private static func keepEnded(_ index: Int, limit: Int, in state: inout State) {
        state.ended.append(index)
        while state.ended.count - state.endedHead > limit {
            let oldest = state.ended[state.endedHead]
            state.endedHead += 1
            if let position = state.records.position(ofConnection: oldest) {
                state.records.remove(at: position)
                state.droppedConnections += 1
            }
        }
        // Compact the queue once its consumed head is the larger part.
        if state.endedHead > 64, state.endedHead * 2 > state.ended.count {
            state.ended.removeFirst(state.endedHead)
            state.endedHead = 0
        }
    }
}


extension [ConnectionRecord] {
    /// The position of connection `index`'s record (records are in order of `index`, with gaps where
    /// ended ones were dropped), or nil if it was dropped or not accepted yet.
    func position(ofConnection index: Int) -> Int? {
        // Nothing dropped before it: the record is at `index - 1`.
        if self.indices.contains(index - 1), self[index - 1].index == index { return index - 1 }
        var low = 0
        var high = self.count
        while low < high {
            let middle = (low + high) / 2
            if self[middle].index < index { low = middle + 1 } else { high = middle }
        }
        return low < self.count && self[low].index == index ? low : nil
    }

    /// Connection `index`'s record, or nil if it was dropped or not accepted yet.
    func record(ofConnection index: Int) -> ConnectionRecord? {
        self.position(ofConnection: index).map { self[$0] }
    }
}
#endif
