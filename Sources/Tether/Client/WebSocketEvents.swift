import Synchronization
import TetherWire

/// A client's events, in the order they happened (`WebSocketClient.events`).
///
/// Unicast: iterate it from one task at a time; a second task waiting for the next event at the same time traps.
/// No event is ever dropped; instead, once the events not read yet weigh more than the configuration's
/// `inboundWatermarks.high`, the client stops reading its socket until they are down to the low watermark, so a
/// slow consumer slows the server through TCP and memory stays bounded. It ends (`next()` returns nil) once the client is
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

/// The buffer between a client (which yields, on its executor) and the one task that reads its events, with the
/// weight of what it holds: above the high watermark it is `held` until the reader has brought it down to the low
/// one, and tells `onRelease` then.
final class EventChannel: Sendable {
    private typealias Reader = UnsafeContinuation<WebSocketEvent?, Never>

    private struct State {
        /// Events not read yet: `buffer[head...]`.
        var buffer: [WebSocketEvent] = []
        var head = 0
        /// The reader waiting for the next event, if it found none.
        var reader: Reader?
        /// The reader's wake-up was deferred to the end of the yielding thread's turn (`WakeBatcher`): the events
        /// yielded meanwhile are buffered, and the reader is resumed with the first of them then.
        var wakeDeferred = false
        /// Finished by the client (the buffer is still read to its end) or by the reader's cancellation.
        var finished = false
        /// What `buffer[head...]` weighs (`EventChannel.weight(of:)`).
        var weight = 0
        /// Above the high watermark, until down to the low one.
        var held = false
        /// The most `weight` has been.
        var peakWeight = 0
        /// Called (without the lock) when `held` clears.
        var onRelease: (@Sendable () -> Void)?

        /// The next event, and whether taking it released the hold.
        mutating func popFirst(low: Int) -> (event: WebSocketEvent, released: Bool)? {
            guard self.head < self.buffer.count else { return nil }
            let event = self.buffer[self.head]
            self.weight -= EventChannel.weight(of: event)
            var released = false
            if self.held, self.weight <= low {
                self.held = false
                released = true
            }
            self.head += 1
            if self.head == self.buffer.count {
                // Keep the array for the next events, unless a burst grew it large: then give the memory back.
                self.buffer.removeAll(keepingCapacity: self.buffer.capacity <= 4_096)
                self.head = 0
            } else if self.head >= 1_024, self.head * 2 >= self.buffer.count {
                // A buffer that a steady feed never empties: drop the events read so far (each is moved at most
                // once per halving), or they would stay in the array for ever.
                self.buffer.removeFirst(self.head)
                self.head = 0
            }
            return (event, released)
        }
    }

    private let state = Mutex(State())
    private let watermarks: Watermarks
    /// Where a waiting reader's wake-up is deferred to, if anywhere.
    private let batcher: (any WakeBatcher)?
    /// Called (tests only) each time the reader parks because nothing is buffered.
    private let readerParked: (@Sendable () -> Void)?

    /// - Parameter batcher: when `yield` is called on its thread, a waiting reader is resumed at the end of that
    ///   thread's turn rather than at once, together with the readers of the other channels yielded to in the turn.
    init(
        watermarks: Watermarks = .standard, batcher: (any WakeBatcher)? = nil,
        readerParked: (@Sendable () -> Void)? = nil
    ) {
        self.watermarks = watermarks
        self.batcher = batcher
        self.readerParked = readerParked
    }

    /// What an event costs in the buffer beside a message's payload: its slot in the array.
    static let eventOverhead = WebSocketEvent.bufferOverhead

    /// What an event weighs against the watermarks: a message its payload plus `eventOverhead`, any other event
    /// `eventOverhead`.
    static func weight(of event: WebSocketEvent) -> Int {
        guard case .message(let message, _) = event else { return Self.eventOverhead }
        return message.byteCount + Self.eventOverhead
    }

    /// The slots the buffer's array holds, read events not yet dropped among them (tests check it stays bounded).
    var storedSlots: Int { self.state.withLock { $0.buffer.count } }

    /// The most the buffered events have weighed (tests and benchmarks check the bound with it).
    var peakWeight: Int { self.state.withLock { $0.peakWeight } }

    /// Whether the buffer is above its high watermark (and not yet back at the low one).
    var isHeld: Bool { self.state.withLock { $0.held } }

    /// Sets what is called, on the thread of the reader that brought the buffer down to the low watermark, when a
    /// hold ends.
    func onRelease(_ body: @escaping @Sendable () -> Void) {
        self.state.withLock { $0.onRelease = body }
    }

    /// Delivers `event` to the waiting reader, or buffers it. Dropped once the channel has finished.
    /// - Returns: true when buffering it put the buffer above the high watermark (it is now held).
    @discardableResult
    func yield(_ event: WebSocketEvent) -> Bool {
        let deferring = self.batcher?.isCurrent == true
        var crossed = false
        var deferWake = false
        let reader: Reader? = self.state.withLock { state in
            guard !state.finished else { return nil }
            guard let reader = state.reader, !state.wakeDeferred else {
                state.buffer.append(event)
                state.weight += Self.weight(of: event)
                state.peakWeight = max(state.peakWeight, state.weight)
                if !state.held, state.weight > self.watermarks.high {
                    state.held = true
                    crossed = true
                }
                return nil
            }
            if deferring {
                // The reader stays parked; the event waits in the buffer (empty while a reader waits) until the
                // end of the turn.
                state.wakeDeferred = true
                deferWake = true
                state.buffer.append(event)
                state.weight += Self.weight(of: event)
                state.peakWeight = max(state.peakWeight, state.weight)
                return nil
            }
            state.reader = nil
            return reader
        }
        if deferWake {
            self.batcher?.deferToEndOfTurn { [self] in self.wakeDeferredReader() }
        }
        reader?.resume(returning: event)
        return crossed
    }

    /// The end of the turn in which a waiting reader's wake-up was deferred: resumes it with the first event.
    private func wakeDeferredReader() {
        self.resumeReader { state in
            guard state.wakeDeferred else { return false }
            state.wakeDeferred = false
            return true  // unless `finish` resumed the reader meanwhile
        }
    }

    /// Under the lock, when `proceed` says so, takes the waiting reader and the first buffered event (nil: none),
    /// then resumes the reader with it outside the lock, after telling `onRelease` if taking it ended a hold.
    private func resumeReader(if proceed: (inout State) -> Bool) {
        var release: (@Sendable () -> Void)?
        let woken: (Reader, WebSocketEvent?)? = self.state.withLock { state in
            guard proceed(&state), let reader = state.reader else { return nil }
            state.reader = nil
            guard let (event, released) = state.popFirst(low: self.watermarks.low) else { return (reader, nil) }
            release = released ? state.onRelease : nil
            return (reader, event)
        }
        release?()
        guard let (reader, event) = woken else { return }
        reader.resume(returning: event)
    }

    /// Takes the next buffered event; tells `onRelease` when that ended a hold.
    private func popFirst() -> WebSocketEvent? {
        let taken = self.state.withLock { state -> (WebSocketEvent, (@Sendable () -> Void)?)? in
            guard let (event, released) = state.popFirst(low: self.watermarks.low) else { return nil }
            return (event, released ? state.onRelease : nil)
        }
        guard let (event, release) = taken else { return nil }
        release?()
        return event
    }

    /// Ends the sequence after the events already buffered. A reader whose wake-up was deferred gets the events
    /// buffered meanwhile first, then the end.
    func finish() {
        self.resumeReader { state in
            state.finished = true
            return true
        }
    }

    func next(isolation actor: isolated (any Actor)?) async -> WebSocketEvent? {
        // The common case when events come faster than they are read: no continuation, no cancellation handler.
        if let event = self.popFirst() {
            return event
        }
        return await withTaskCancellationHandler {
            await withUnsafeContinuation(isolation: actor) { (continuation: Reader) in
                // Under the lock: a cancellation either came first (and finished the channel) or finds the reader.
                var release: (@Sendable () -> Void)?
                let ready: WebSocketEvent?? = self.state.withLock { state in
                    if let (event, released) = state.popFirst(low: self.watermarks.low) {
                        release = released ? state.onRelease : nil
                        return .some(event)
                    }
                    if state.finished { return .some(nil) }
                    precondition(state.reader == nil, "WebSocketClient.events is unicast: one task may wait on it")
                    state.reader = continuation
                    return .none
                }
                release?()
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

/// A thread that runs in turns (an event loop) and can run work at the end of its current turn. `EventChannel`
/// defers its reader's wake-up there, so that the readers of many clients woken in one turn are handed to the
/// thread pool together: the pool then wakes one thread for all of them, not one per reader.
protocol WakeBatcher: Sendable {
    /// Whether the caller is on the batcher's thread, inside a turn.
    var isCurrent: Bool { get }
    /// Runs `work` on the batcher's thread at the end of the current turn. Only called when `isCurrent`.
    func deferToEndOfTurn(_ work: @escaping @Sendable () -> Void)
}

extension WebSocketEvent {
    /// What an event weighs against `inboundWatermarks` beside a message's payload: its own size in the client's
    /// buffer. For the checks and benchmarks that compute the bound.
    package static var bufferOverhead: Int { MemoryLayout<WebSocketEvent>.stride }
}
