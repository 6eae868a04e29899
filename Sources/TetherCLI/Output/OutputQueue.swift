import Foundation
import Synchronization

/// What a command prints, written to standard output and standard error by one thread of its own, in order,
/// from a queue bounded in bytes.
///
/// A write to a pipe nobody reads blocks, and may block forever. Only this thread ever waits for one: a command
/// waits for room in the queue (`write`, `waitForRoom`), which the cancellation of its task or `abandon()` ends,
/// so a signal can always end the command even while a write is stuck. A producer faster than the terminal
/// suspends instead of queueing without limit; a command that consumes a network feed thereby stops consuming,
/// and the feed's own flow control pushes back to the peer.
///
/// The alternative, non-blocking descriptors, would change the open file description that the shell and the
/// other processes of a pipeline share with the command; a thread keeps the descriptors as they were given.
final class OutputQueue: Sendable {
    enum Stream: Sendable, Equatable {
        case output
        case error
    }

    /// One piece of text for one stream.
    struct Chunk: Sendable {
        var stream: Stream
        var text: String
    }

    /// The most bytes queued before writers wait. A writer that found room may add one more batch past it.
    static let defaultLimit = 1 << 20
    /// About the most bytes the thread writes at once.
    private static let batchSize = 1 << 16

    private struct State {
        /// Bytes queued before writers wait.
        let limit: Int
        /// Queued: `chunks[head...]`.
        var chunks: [Chunk] = []
        var head = 0
        /// Bytes in `chunks` and in the batch being written.
        var bytes = 0
        /// The writing thread holds a batch.
        var writing = false
        /// No more chunks come: the thread exits once the queue is empty.
        var finished = false
        /// Nothing more is written: the thread drops what is queued and exits after the write in progress.
        var abandoned = false
        var roomWaiters: [UInt64: CheckedContinuation<Bool, Never>] = [:]
        var nextWaiter: UInt64 = 0
        var drainWaiters: [CheckedContinuation<Void, Never>] = []
        /// The thread waits on `wake`: the next change signals it (once).
        var sleeping = false

        var isEmpty: Bool { self.head == self.chunks.count }
        var isDrained: Bool { self.abandoned || (self.isEmpty && !self.writing) }
        var hasRoom: Bool { self.bytes < self.limit }

        mutating func popFirst() -> Chunk? {
            guard self.head < self.chunks.count else { return nil }
            let chunk = self.chunks[self.head]
            self.head += 1
            if self.head == self.chunks.count {
                self.chunks.removeAll(keepingCapacity: true)
                self.head = 0
            } else if self.head >= 1024, self.head * 2 >= self.chunks.count {
                self.chunks.removeSubrange(..<self.head)  // a queue that never empties keeps no written text
                self.head = 0
            }
            return chunk
        }

        /// Whether to signal `wake`: the thread sleeps (it is then marked awake, so that it is signalled once).
        mutating func wakeThread() -> Bool {
            defer { self.sleeping = false }
            return self.sleeping
        }
    }

    private let state: Mutex<State>
    /// Signalled when the thread sleeps and there is something for it to do.
    private let wake = DispatchSemaphore(value: 0)
    private let io: CommandIO

    /// Starts the writing thread.
    /// - Parameters:
    ///   - io: its `write` and `writeError` are called on the queue's thread only.
    ///   - limit: bytes queued before writers wait. Default `defaultLimit` (1 MiB).
    init(io: CommandIO, limit: Int = OutputQueue.defaultLimit) {
        self.io = io
        self.state = Mutex(State(limit: limit))
        let thread = Thread { [self] in self.writeUntilFinished() }
        thread.name = "tether-output"
        thread.start()
    }

    // MARK: Writers

    /// Waits until the queue has room, then queues `text`.
    /// - Returns: false when nothing was queued: the calling task was cancelled or the queue abandoned.
    @discardableResult
    func write(_ text: String, to stream: Stream = .output) async -> Bool {
        guard await self.waitForRoom() else { return false }
        return self.append([Chunk(stream: stream, text: text)])
    }

    /// Suspends while the queue is full.
    /// - Returns: true once there is room; false when the calling task is cancelled or the queue abandoned.
    func waitForRoom() async -> Bool {
        let id: UInt64? = self.state.withLock { state in
            guard !state.hasRoom, !state.abandoned else { return nil }
            state.nextWaiter += 1
            return state.nextWaiter
        }
        guard let id else { return !self.state.withLock { $0.abandoned } && !Task.isCancelled }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let now: Bool? = self.state.withLock { state in
                    if state.abandoned || Task.isCancelled { return false }
                    if state.hasRoom { return true }
                    state.roomWaiters[id] = continuation
                    return nil
                }
                if let now { continuation.resume(returning: now) }
            }
        } onCancel: {
            let waiter = self.state.withLock { $0.roomWaiters.removeValue(forKey: id) }
            waiter?.resume(returning: false)
        }
    }

    /// Queues `chunks` as one unit (nothing else is written between them), without waiting for room: call
    /// `waitForRoom()` first so that the queue stays bounded.
    /// - Returns: false when the queue was abandoned (nothing is queued).
    @discardableResult
    func append(_ chunks: [Chunk]) -> Bool {
        let bytes = chunks.reduce(0) { $0 + $1.text.utf8.count }
        let (queued, wakes) = self.state.withLock { state -> (Bool, Bool) in
            guard !state.abandoned else { return (false, false) }
            state.chunks.append(contentsOf: chunks)
            state.bytes += bytes
            return (true, state.wakeThread())
        }
        if wakes { self.wake.signal() }
        return queued
    }

    /// Queues `text` if the queue has room, without waiting.
    /// - Returns: false when the queue is full or abandoned (nothing is queued).
    func offer(_ text: String, to stream: Stream = .output) -> Bool {
        let (queued, wakes) = self.state.withLock { state -> (Bool, Bool) in
            guard state.hasRoom, !state.abandoned else { return (false, false) }
            state.chunks.append(Chunk(stream: stream, text: text))
            state.bytes += text.utf8.count
            return (true, state.wakeThread())
        }
        if wakes { self.wake.signal() }
        return queued
    }

    /// Waits until everything queued so far has been written (the queue goes on taking more). For tests that read
    /// what a command wrote at a given moment.
    func waitUntilWritten() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let drained = self.state.withLock { state -> Bool in
                if state.isDrained { return true }
                state.drainWaiters.append(continuation)
                return false
            }
            if drained { continuation.resume() }
        }
    }

    // MARK: Ending

    /// Waits until everything queued has been written, then lets the thread exit. Cancelling the calling task
    /// ends the wait (the thread goes on writing).
    func finish() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let (drained, wakes) = self.state.withLock { state -> (Bool, Bool) in
                    state.finished = true
                    let wakes = state.wakeThread()
                    if state.isDrained || Task.isCancelled { return (true, wakes) }
                    state.drainWaiters.append(continuation)
                    return (false, wakes)
                }
                if wakes { self.wake.signal() }
                if drained { continuation.resume() }
            }
        } onCancel: {
            let waiters = self.state.withLock { state in
                defer { state.drainWaiters.removeAll() }
                return state.drainWaiters
            }
            for waiter in waiters { waiter.resume() }
        }
    }

    /// Drops what is queued and ends every wait: the command exits even if a write never returns. The thread
    /// exits once the write in progress, if any, returns.
    func abandon() {
        let (rooms, drains, wakes) = self.state.withLock { state in
            state.abandoned = true
            state.finished = true
            state.chunks.removeAll()
            state.head = 0
            state.bytes = 0
            defer {
                state.roomWaiters.removeAll()
                state.drainWaiters.removeAll()
            }
            return (Array(state.roomWaiters.values), state.drainWaiters, state.wakeThread())
        }
        if wakes { self.wake.signal() }
        for waiter in rooms { waiter.resume(returning: false) }
        for waiter in drains { waiter.resume() }
    }

    // MARK: The writing thread

    private func writeUntilFinished() {
        while true {
            switch self.takeBatch() {
            case .write(let batch):
                for chunk in batch {
                    switch chunk.stream {
                    case .output: self.io.write(chunk.text)
                    case .error: self.io.writeError(chunk.text)
                    }
                }
                self.wrote(batch)
            case .sleep:
                self.wake.wait()
            case .exit:
                return
            }
        }
    }

    private enum Next {
        case write([Chunk])
        case sleep
        case exit
    }

    /// The first chunks queued, about `batchSize` bytes of them (at least one chunk), with neighbouring chunks of
    /// the same stream joined: a busy feed of small messages is written with few system calls, and the queue has
    /// room again after each batch, not only once it is empty.
    private func takeBatch() -> Next {
        self.state.withLock { state -> Next in
            if state.abandoned || (state.finished && state.isEmpty) { return .exit }
            if state.isEmpty {
                state.sleeping = true
                return .sleep
            }
            state.writing = true
            var batch: [Chunk] = []
            var bytes = 0
            while bytes < Self.batchSize, let chunk = state.popFirst() {
                bytes += chunk.text.utf8.count
                if let last = batch.last, last.stream == chunk.stream {
                    batch[batch.count - 1].text += chunk.text
                } else {
                    batch.append(chunk)
                }
            }
            return .write(batch)
        }
    }

    /// The batch is written: frees its bytes and wakes the writers waiting for room or for the end.
    private func wrote(_ batch: [Chunk]) {
        let bytes = batch.reduce(0) { $0 + $1.text.utf8.count }
        let (rooms, drains) = self.state.withLock { state in
            state.writing = false
            state.bytes = state.abandoned ? 0 : state.bytes - bytes
            var rooms: [CheckedContinuation<Bool, Never>] = []
            if state.hasRoom {
                rooms = Array(state.roomWaiters.values)
                state.roomWaiters.removeAll()
            }
            var drains: [CheckedContinuation<Void, Never>] = []
            if state.isDrained {
                drains = state.drainWaiters
                state.drainWaiters.removeAll()
            }
            return (rooms, drains)
        }
        for waiter in rooms { waiter.resume(returning: true) }
        for waiter in drains { waiter.resume() }
    }
}
