import Synchronization

/// A client's events, in the order they happened (`WebSocketClient.events`).
///
/// Unicast: iterate it from one task at a time; a second task waiting for the next event at the same time traps.
/// Unbounded, so that no received message is ever dropped. It ends (`next()` returns nil) once the client is
/// deinitialized and every event before that was read, or when the task iterating it is cancelled (after the
/// events already buffered); events after the end are dropped. That is `AsyncStream`'s contract, kept by a
/// channel written for this one element type: the stream's generic storage looks up type metadata on every event.
public struct WebSocketEvents: AsyncSequence, Sendable {
    public typealias Element = WebSocketEvent
    public typealias Failure = Never

    let channel: EventChannel

    public func makeAsyncIterator() -> Iterator {
        Iterator(channel: self.channel)
    }

    public struct Iterator: AsyncIteratorProtocol {
        public typealias Element = WebSocketEvent
        public typealias Failure = Never

        let channel: EventChannel

        /// The next event, or nil once the sequence has ended. Resumes on the caller's isolation.
        public mutating func next(isolation actor: isolated (any Actor)? = #isolation) async -> WebSocketEvent? {
            await self.channel.next(isolation: actor)
        }

        public mutating func next() async -> WebSocketEvent? {
            await self.channel.next(isolation: nil)
        }
    }
}

/// The buffer between a client (which yields, on its executor) and the one task that reads its events.
final class EventChannel: Sendable {
    private typealias Reader = UnsafeContinuation<WebSocketEvent?, Never>

    private struct State {
        /// Events not read yet: `buffer[head...]`.
        var buffer: [WebSocketEvent] = []
        var head = 0
        /// The reader waiting for the next event, if it found none.
        var reader: Reader?
        /// Finished by the client (the buffer is still read to its end) or by the reader's cancellation.
        var finished = false

        mutating func popFirst() -> WebSocketEvent? {
            guard self.head < self.buffer.count else { return nil }
            let event = self.buffer[self.head]
            self.head += 1
            if self.head == self.buffer.count {
                self.buffer.removeAll(keepingCapacity: true)
                self.head = 0
            }
            return event
        }
    }

    private let state = Mutex(State())
    /// Called (tests only) each time the reader parks because nothing is buffered.
    private let readerParked: (@Sendable () -> Void)?

    init(readerParked: (@Sendable () -> Void)? = nil) {
        self.readerParked = readerParked
    }

    /// Delivers `event` to the waiting reader, or buffers it. Dropped once the channel has finished.
    func yield(_ event: WebSocketEvent) {
        let reader: Reader? = self.state.withLock { state in
            guard !state.finished else { return nil }
            guard let reader = state.reader else {
                state.buffer.append(event)
                return nil
            }
            state.reader = nil
            return reader
        }
        reader?.resume(returning: event)
    }

    /// Ends the sequence after the events already buffered.
    func finish() {
        let reader = self.state.withLock { state in
            state.finished = true
            let reader = state.reader
            state.reader = nil
            return reader
        }
        reader?.resume(returning: nil)
    }

    func next(isolation actor: isolated (any Actor)?) async -> WebSocketEvent? {
        // The common case when events come faster than they are read: no continuation, no cancellation handler.
        if let event = self.state.withLock({ $0.popFirst() }) {
            return event
        }
        return await withTaskCancellationHandler {
            await withUnsafeContinuation(isolation: actor) { (continuation: Reader) in
                // Under the lock: a cancellation either came first (and finished the channel) or finds the reader.
                let ready: WebSocketEvent?? = self.state.withLock { state in
                    if let event = state.popFirst() { return .some(event) }
                    if state.finished { return .some(nil) }
                    precondition(state.reader == nil, "WebSocketClient.events is unicast: one task may wait on it")
                    state.reader = continuation
                    return .none
                }
                if let ready {
                    continuation.resume(returning: ready)
                } else {
                    self.readerParked?()
                }
            }
        } onCancel: {
            // Cancelling the waiting task ends the sequence as the client's end does: later events are dropped.
            self.finish()
        }
    }
}
