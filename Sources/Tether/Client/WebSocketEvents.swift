import Synchronization
import TetherWire

/// A client's events, in the order they happened (`WebSocketClient.events`).
///
/// One stream with backpressure, read by one reader at a time. No event is ever dropped; instead, once the events
/// not read yet weigh more than the configuration's `inboundWatermarks.high`, the client stops reading its socket
/// until they are down to the low watermark, so a slow consumer slows the server through TCP and memory stays
/// bounded, whether a reader is attached or not.
///
/// Readers come and go (docs/client.md "Readers that come and go"):
/// - **Cancelling** the task that iterates detaches it: its `next()` returns nil at once (its `for await` loop ends),
///   nothing is taken from the buffer for it, and the events wait, within the watermarks, for the next reader.
/// - **The newest iterator takes over**: `makeAsyncIterator()` (a new `for await`) makes the new iterator the
///   reader; the older one's `next()` returns nil from then on (at once if it is waiting), and the new one goes on
///   from the first event the older one did not take. A SwiftUI view replaced by another may start its `.task`
///   before the old one's is cancelled: the new one reads, the old one ends. Nothing traps.
/// - It ends (`next()` returns nil) once the client is deinitialized and every event before that was read; events
///   after the end are dropped.
///
/// A channel written for this one element type: `AsyncStream`'s generic storage looks up type metadata on every
/// event.
public struct WebSocketEvents: AsyncSequence, Sendable {
    public typealias Element = WebSocketEvent
    public typealias Failure = Never

    let channel: EventChannel

    /// A new reader, which takes over from the current one (see the type's documentation).
    public func makeAsyncIterator() -> Iterator {
        Iterator(channel: self.channel, reader: self.channel.attachReader())
    }

    public struct Iterator: AsyncIteratorProtocol {
        public typealias Element = WebSocketEvent
        public typealias Failure = Never

        let channel: EventChannel
        /// This iterator's number: it reads while it is the channel's newest.
        let reader: Int

        /// The next event; nil once the sequence has ended, once a newer iterator took over, or when the calling
        /// task is cancelled (the events stay for the next reader). Resumes on the caller's isolation.
        public mutating func next(isolation actor: isolated (any Actor)? = #isolation) async -> WebSocketEvent? {
            // An event already buffered is taken without calling into another async function: each such call costs
            // a task switch in the runtime (its executor checks), per event.
            if let taken = self.channel.takeNow(reader: self.reader) { return taken }
            return await self.channel.wait(reader: self.reader, isolation: actor)
        }

        public mutating func next() async -> WebSocketEvent? {
            if let taken = self.channel.takeNow(reader: self.reader) { return taken }
            return await self.channel.wait(reader: self.reader, isolation: nil)
        }
    }
}

/// The buffer between a client (which yields, on its executor) and the task that reads its events, with the weight
/// of what it holds: above the high watermark it is `held` until a reader has brought it down to the low one. A hold
/// that begins in `yield` is its return value; one that ends (or, rarely, begins) in a reader's call is told to
/// `onHoldChange`. Readers are numbered as they attach; only the newest reads, and a cancelled one takes nothing
/// (`WebSocketEvents`).
///
/// Yielded on a thread that runs in turns (`WakeBatcher`: the client's event loop), the waiting reader's wake-up is
/// deferred to the end of the turn, with everything yielded in it; off that thread, the reader is woken at once.
/// Either way the event yielded to the waiting reader is that reader's, and does not count against the watermarks:
/// only what waits behind it does (a lone message larger than the high watermark, taken by a reader that waits for
/// it, holds nothing; the same message waiting for a reader that is busy holds reading).
///
/// Events are moved into and out of the buffer, not copied: a `WebSocketEvent` is a large enum.
final class EventChannel: Sendable {
    private typealias Reader = UnsafeContinuation<WebSocketEvent?, Never>

    private struct State {
        /// Events not read yet: `buffer[head...]` (the slots before `head` were moved out).
        var buffer: [WebSocketEvent?] = []
        var head = 0
        /// The number of the newest reader (0: none attached yet); older ones get the end.
        var newestReader = 0
        /// The newest reader, waiting for the next event because it found none.
        var reader: Reader?
        /// The reader's wake-up was deferred to the end of the yielding thread's turn (`WakeBatcher`): the events
        /// yielded meanwhile are buffered, and the reader is resumed with the first of them then.
        var wakeDeferred = false
        /// `buffer[head]` is the event yielded to the waiting reader whose wake-up was deferred: handed over at the
        /// end of the turn, it is not counted in `weight` (as an event handed over at once is not), unless the
        /// reader leaves without it (`detachReader`).
        var promised = false
        /// Finished by the client: the buffer is still read to its end.
        var finished = false
        /// What `buffer[head...]` weighs (`EventChannel.weight(of:)`).
        var weight = 0
        /// Above the high watermark, until down to the low one.
        var held = false
        /// The most `weight` has been.
        var peakWeight = 0
        /// Called (without the lock) when `held` changes other than in `yield`: it cleared, or a reader left the
        /// event promised to it to count (`detachReader`).
        var onHoldChange: (@Sendable () -> Void)?
        /// What wakes the reader at the end of a turn, made on first use (a closure per deferral was an allocation
        /// per wake-up).
        var waker: Waker?

        /// Buffers `event`; true when that put the buffer above the high watermark (it is held from now on).
        mutating func append(_ event: consuming WebSocketEvent, high: Int) -> Bool {
            let weight = event.bufferWeight
            self.buffer.append(event)
            return self.count(weight, high: high)
        }

        /// Buffers `event` for the waiting reader, to be handed over at the end of the turn (`promised`).
        mutating func promise(_ event: consuming WebSocketEvent) {
            assert(self.head == self.buffer.count && !self.promised, "a reader waits only when nothing is buffered")
            self.buffer.append(event)
            self.promised = true
        }

        /// Adds `weight` to what the buffer holds; true when that put it above the high watermark.
        private mutating func count(_ weight: Int, high: Int) -> Bool {
            self.weight += weight
            self.peakWeight = max(self.peakWeight, self.weight)
            guard !self.held, self.weight > high else { return false }
            self.held = true
            return true
        }

        /// Moves the next event out, with whether taking it released the hold.
        mutating func popFirst(low: Int) -> (event: WebSocketEvent, released: Bool)? {
            guard self.head < self.buffer.count, let event = self.buffer[self.head].take() else { return nil }
            if self.promised {
                self.promised = false  // handed to its reader: it was not counted
            } else {
                self.weight -= event.bufferWeight
            }
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
                // A buffer that a steady feed never empties: drop the slots read so far (each event is moved at
                // most once per halving), or the array would grow for ever.
                self.buffer.removeFirst(self.head)
                self.head = 0
            }
            return (event, released)
        }

        /// What reader number `reader` gets now: an event, or nil with `ended` (the sequence ended for it: the
        /// channel finished and is empty, or a newer reader took over) or without (nothing buffered yet: wait); and
        /// what to tell (outside the lock) when taking it ended a hold.
        mutating func take(
            for reader: Int, low: Int
        ) -> (WebSocketEvent?, ended: Bool, release: (@Sendable () -> Void)?) {
            guard reader == self.newestReader else { return (nil, true, nil) }
            if let (event, released) = self.popFirst(low: low) {
                return (event, false, released ? self.onHoldChange : nil)
            }
            return (nil, self.finished, nil)
        }

        /// Takes the waiting reader out, with its deferred wake-up: the caller resumes it with nil, and the events it
        /// did not take wait for the next reader, the one promised to it among them, which counts from now on; what
        /// to tell (outside the lock) when that put the buffer above the high watermark.
        mutating func detachReader(high: Int) -> (Reader?, hold: (@Sendable () -> Void)?) {
            self.wakeDeferred = false  // a deferred wake-up that finds no reader does nothing
            defer { self.reader = nil }
            guard self.promised, let weight = self.buffer[self.head]?.bufferWeight else { return (self.reader, nil) }
            self.promised = false
            return (self.reader, self.count(weight, high: high) ? self.onHoldChange : nil)
        }
    }

    /// A channel's wake-up closure, made once. In a class, so that reading it does not re-wrap it: kept in an optional
    /// tuple in the state, each read and store wrapped the closure in one more reabstraction thunk.
    private final class Waker: Sendable {
        let wake: @Sendable () -> Void

        init(_ channel: EventChannel) {
            // Weak: the waker lives in the channel. A parked reader holds the channel, so it is there to be woken.
            self.wake = { [weak channel] in channel?.wakeDeferredReader() }
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
        event.bufferWeight
    }

    /// The slots the buffer's array holds, read events not yet dropped among them (tests check it stays bounded).
    var storedSlots: Int { self.state.withLock { $0.buffer.count } }

    /// The most the buffered events have weighed (tests and benchmarks check the bound with it).
    var peakWeight: Int { self.state.withLock { $0.peakWeight } }

    /// Whether the buffer is above its high watermark (and not yet back at the low one).
    var isHeld: Bool { self.state.withLock { $0.held } }

    /// Sets what is called when the hold changes other than in `yield`: on the thread of the reader that brought the
    /// buffer down to the low watermark when a hold ends; on the thread of a reader's cancellation or replacement
    /// when the event promised to the reader it detached puts the buffer above the high watermark. `isHeld` says
    /// which, when it is read.
    func onHoldChange(_ body: @escaping @Sendable () -> Void) {
        self.state.withLock { $0.onHoldChange = body }
    }

    /// Delivers `event` to the waiting reader, or buffers it. Dropped once the channel has finished.
    /// - Returns: true when buffering it put the buffer above the high watermark (it is now held).
    @discardableResult
    func yield(_ event: consuming WebSocketEvent) -> Bool {
        let batcher = self.batcher
        let deferring = batcher?.isCurrent == true
        let high = self.watermarks.high
        var event: WebSocketEvent? = consume event  // moved once: into the buffer, or to the reader
        var crossed = false
        var waker: Waker?
        let reader: Reader? = self.state.withLock { state in
            guard !state.finished else { return nil }
            guard let reader = state.reader, !state.wakeDeferred else {
                crossed = state.append(event.take()!, high: high)
                return nil
            }
            guard deferring else {
                state.reader = nil
                return reader
            }
            // The reader stays parked; the event waits in the buffer (empty while a reader waits) until the end of
            // the turn, promised to it: not counted, as it would not be if it were handed over at once.
            state.wakeDeferred = true
            state.promise(event.take()!)
            waker = state.waker ?? Waker(self)
            state.waker = waker
            return nil
        }
        if let waker { batcher?.deferToEndOfTurn(waker.wake) }
        if let reader { reader.resume(returning: event.take()) }
        return crossed
    }

    /// The end of the turn in which a waiting reader's wake-up was deferred: resumes it with the first event.
    fileprivate func wakeDeferredReader() {
        self.resumeReader { state in
            guard state.wakeDeferred else { return false }
            state.wakeDeferred = false
            return true  // unless `finish` resumed the reader meanwhile, or it left (cancelled, or replaced)
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
            release = released ? state.onHoldChange : nil
            return (reader, event)
        }
        release?()
        guard let (reader, event) = woken else { return }
        reader.resume(returning: event)
    }

    /// Ends the sequence after the events already buffered. A reader whose wake-up was deferred gets the events
    /// buffered meanwhile first, then the end.
    func finish() {
        self.resumeReader { state in
            state.finished = true
            return true
        }
    }

    /// Attaches a new reader, which takes over: the reader waiting now, if any, gets the end (nil), and the events it
    /// did not take wait for the new one. Returns the new reader's number.
    func attachReader() -> Int {
        let (number, (superseded, hold)) = self.state.withLock { state in
            state.newestReader += 1
            return (state.newestReader, state.detachReader(high: self.watermarks.high))
        }
        hold?()
        superseded?.resume(returning: nil)
        return number
    }

    /// What reader number `reader` gets without waiting: `.some(event)`, `.some(nil)` once the channel finished and
    /// is empty, once a newer reader attached, or when the calling task is cancelled (it takes nothing then: the
    /// events wait for the next reader); nil when it must wait (`wait(reader:isolation:)`). The common case when events
    /// come faster than they are read: no continuation, no cancellation handler.
    func takeNow(reader: Int) -> WebSocketEvent?? {
        guard !Task.isCancelled else { return .some(nil) }
        let (first, ended, release) = self.state.withLock { $0.take(for: reader, low: self.watermarks.low) }
        release?()
        return first != nil || ended ? .some(first) : nil
    }

    /// The next event for reader number `reader` once one comes, after `takeNow` found none: as `takeNow`, waiting.
    func wait(reader: Int, isolation actor: isolated (any Actor)?) async -> WebSocketEvent? {
        await withTaskCancellationHandler {
            await withUnsafeContinuation(isolation: actor) { (continuation: Reader) in
                var release: (@Sendable () -> Void)?
                var superseded: Reader?
                let ready: WebSocketEvent?? = self.state.withLock { state in
                    let (event, ended, taken) = state.take(for: reader, low: self.watermarks.low)
                    release = taken
                    if event != nil || ended { return .some(event) }
                    // The cancellation flag is set before the handler runs, and the handler takes this lock: a
                    // cancellation either is seen here or finds this reader waiting.
                    if Task.isCancelled { return .some(nil) }
                    // None: only the newest reader waits, one call at a time (and nothing is promised to none).
                    superseded = state.detachReader(high: self.watermarks.high).0
                    state.reader = continuation
                    return .none
                }
                release?()
                superseded?.resume(returning: nil)
                if let ready {
                    continuation.resume(returning: ready)
                } else {
                    self.readerParked?()
                }
            }
        } onCancel: {
            // Cancelling the waiting task detaches it: its loop ends, the events wait for the next reader.
            let (detached, hold) = self.state.withLock { state in
                state.newestReader == reader ? state.detachReader(high: self.watermarks.high) : (nil, nil)
            }
            hold?()
            detached?.resume(returning: nil)
        }
    }
}

/// A thread that runs in turns (an event loop) and can run work at the end of its current turn. `EventChannel`
/// defers its reader's wake-up there, so that the readers of many clients woken in one turn are handed to the
/// thread pool together: the pool then wakes one thread for all of them, not one per reader.
protocol WakeBatcher: AnyObject, Sendable {
    /// Whether the caller is on the batcher's thread, inside a turn.
    var isCurrent: Bool { get }
    /// Runs `work` on the batcher's thread at the end of the current turn. Only called when `isCurrent`.
    func deferToEndOfTurn(_ work: @escaping @Sendable () -> Void)
}

extension WebSocketEvent {
    /// What an event weighs against `inboundWatermarks` beside a message's payload: its own size in the client's
    /// buffer. For the checks and benchmarks that compute the bound.
    package static var bufferOverhead: Int { MemoryLayout<WebSocketEvent?>.stride }

    /// What this event weighs in the client's buffer (`EventChannel.weight(of:)`), read without copying it.
    var bufferWeight: Int {
        guard case .message(let message, _) = self else { return Self.bufferOverhead }
        return message.byteCount + Self.bufferOverhead
    }
}
