#if os(Linux)
import Dispatch
import Glibc
import Synchronization
@testable import TetherPOSIX

/// A `ByteStream` whose kernel is a script, for driving a `WebSocketDriver` without a socket: the bytes the kernel
/// takes are kept in order for the test to read as the peer would; while the script gives the kernel no room, writes
/// wait in a queue as they do in `TCPConnection`'s (with their completions, the watermarks' level and its drain
/// waiters); and every call the driver makes on the stream (pause, resume, close, reset, a write refused after the
/// sealing one) is counted.
final class ScriptedByteStream: ByteStream {
    let loop: EventLoop
    private let state = Mutex(State())
    /// Set by `holdFirstWrite(upTo:onHold:)`.
    private let gate = Mutex<WriteGate?>(nil)
    /// Set by `writersYield()`.
    private let yields = Atomic<Bool>(false)

    private struct State {
        /// What the kernel took, in order.
        var taken: [UInt8] = []
        /// How many more bytes the kernel takes before writes wait (`.max`: all of them).
        var room = Int.max
        var queue: [(bytes: [UInt8], completion: TCPConnection.WriteCompletion?)] = []
        var queuedBytes = 0
        var largestQueue = 0
        var drainWaiters: [(limit: Int, body: @Sendable () -> Void)] = []
        var accepting = true
        var refusedWrites = 0
        var sealed = false
        var closed = false
        var reset = false
        var paused = false
        /// The kernel takes writes only on the loop, this many bytes per step (`kernelDrains(bytesPerStep:)`).
        var bytesPerStep: Int?
        var draining = false
    }

    init(loop: EventLoop) {
        self.loop = loop
    }

    // MARK: - The script

    /// What the kernel has taken so far.
    var taken: [UInt8] { self.state.withLock { $0.taken } }
    /// The most bytes that ever waited in the queue.
    var largestQueue: Int { self.state.withLock { $0.largestQueue } }
    /// Writes refused because a sealing write (our close frame) came before them, or the stream was closed.
    var refusedWrites: Int { self.state.withLock { $0.refusedWrites } }
    var wasSealed: Bool { self.state.withLock { $0.sealed } }
    var wasClosed: Bool { self.state.withLock { $0.closed } }
    var wasReset: Bool { self.state.withLock { $0.reset } }
    var isReadingPaused: Bool { self.state.withLock { $0.paused } }

    /// From now on the kernel takes at most `bytes` more (then writes wait), or everything (`.max`); what waits is
    /// taken now as far as the new room goes, its completions and the drain waiters it satisfies run on the loop.
    func kernelTakes(_ bytes: Int) {
        self.take(room: bytes, keepingRoom: true)
    }

    /// Gives the kernel `bytes` of room and takes what waits, in order, as far as it goes; without `keepingRoom` the
    /// room left is dropped (a draining step's).
    private func take(room bytes: Int, keepingRoom: Bool) {
        var ready: [@Sendable () -> Void] = []
        self.state.withLock { state in
            state.room = bytes
            while !state.queue.isEmpty, state.room > 0 {
                let count = min(state.room, state.queue[0].bytes.count)
                state.taken += state.queue[0].bytes[..<count]
                state.queuedBytes -= count
                if state.room != .max { state.room -= count }
                if count == state.queue[0].bytes.count {
                    let completion = state.queue.removeFirst().completion
                    if let completion { ready.append { completion(.success(())) } }
                } else {
                    state.queue[0].bytes.removeFirst(count)
                }
            }
            if !keepingRoom { state.room = 0 }
            Self.releaseDrainWaiters(&state, into: &ready)
        }
        for body in ready { self.loop.execute(body) }
    }

    /// From now on every writer gives up its thread (`sched_yield`) as it starts a write, as a sender preempted
    /// between encoding its frame and writing it would: a concurrent sender gets the time to write first, if the
    /// driver lets it.
    func writersYield() {
        self.yields.store(true, ordering: .relaxed)
    }

    /// From now on the kernel takes nothing at once: it takes `bytes` of what waits per step of the loop (a piece
    /// of loop work that queues the next one while bytes wait), as a slow peer's socket drains.
    func kernelDrains(bytesPerStep bytes: Int) {
        self.state.withLock { state in
            state.room = 0
            state.bytesPerStep = bytes
        }
    }

    /// The first write to arrive stops its thread (after `onHold`, on that thread) until a second write has been
    /// taken, or `bound` has passed: the kernel (or the scheduler) stalls a sender between its encoding and its
    /// write, and any write that can be made meanwhile goes first. A driver that writes under the lock that ordered
    /// the encoding makes none: the bound passes.
    func holdFirstWrite(upTo bound: Duration, onHold: @escaping @Sendable () -> Void) {
        self.gate.withLock { $0 = WriteGate(bound: bound, onHold: onHold) }
    }

    // MARK: - ByteStream

    func setStreamHandler(_ handler: any ByteStreamHandler) {}

    func startWrite(
        _ bytes: UnsafeRawBufferPointer, array: [UInt8]?, sealing: Bool, delivery: WriteDelivery
    ) -> StartedSend {
        if self.yields.load(ordering: .relaxed) { sched_yield() }
        let gate = self.gate.withLock { $0 }
        let arrival = gate?.arrive()
        defer { if let arrival { gate?.taken(arrival) } }
        var waiter: WriteWaiter?
        var drain = false
        let taken = self.state.withLock { state -> Bool? in
            guard state.accepting else {
                state.refusedWrites += 1
                return nil
            }
            if sealing {
                state.accepting = false
                state.sealed = true
            }
            var count = 0
            if state.queue.isEmpty {
                count = min(bytes.count, state.room)
                state.taken += bytes[..<count]
                if state.room != .max { state.room -= count }
            }
            guard count < bytes.count else { return true }
            let (completion, created) = delivery.completionForWaiting()
            waiter = created
            state.queue.append((Array(bytes[count...]), completion))
            state.queuedBytes += bytes.count - count
            state.largestQueue = max(state.largestQueue, state.queuedBytes)
            if state.bytesPerStep != nil, !state.draining {
                state.draining = true
                drain = true
            }
            return false
        }
        if drain { self.loop.execute { self.drainStep() } }
        switch taken {
        case true?: return delivery.succeeded(on: self.loop)
        case false?: return waiter.map(StartedSend.waiting) ?? .done
        case nil: return delivery.failed(.closed, on: self.loop)
        }
    }

    var queuedWriteBytes: Int { self.state.withLock { $0.queuedBytes } }

    func whenQueuedWrites(atMost limit: Int, _ body: @escaping @Sendable () -> Void) {
        let now = self.state.withLock { state -> Bool in
            guard state.queuedBytes > limit, !state.reset else { return true }
            state.drainWaiters.append((limit, body))
            return false
        }
        if now { self.loop.execute(body) }
    }

    func pauseReading() { self.state.withLock { $0.paused = true } }
    func resumeReading() { self.state.withLock { $0.paused = false } }

    func close() {
        self.state.withLock { state in
            state.accepting = false
            state.closed = true
        }
    }

    func reset() {
        var ready: [@Sendable () -> Void] = []
        self.state.withLock { state in
            state.accepting = false
            state.reset = true
            for write in state.queue {
                if let completion = write.completion { ready.append { completion(.failure(.closed)) } }
            }
            state.queue.removeAll()
            state.queuedBytes = 0
            Self.releaseDrainWaiters(&state, into: &ready)
        }
        for body in ready { self.loop.execute(body) }
    }

    /// One step of `kernelDrains(bytesPerStep:)`: takes its bytes, and queues the next step while bytes wait.
    private func drainStep() {
        guard let bytes = self.state.withLock({ $0.bytesPerStep }) else { return }
        self.take(room: bytes, keepingRoom: false)
        let waiting = self.state.withLock { state -> Bool in
            state.draining = !state.queue.isEmpty
            return state.draining
        }
        if waiting { self.loop.execute { self.drainStep() } }
    }

    private static func releaseDrainWaiters(_ state: inout State, into ready: inout [@Sendable () -> Void]) {
        let level = state.queuedBytes
        state.drainWaiters.removeAll { waiter in
            guard level <= waiter.limit else { return false }
            ready.append(waiter.body)
            return true
        }
    }
}

/// See `ScriptedByteStream.holdFirstWrite(upTo:onHold:)`.
private final class WriteGate: Sendable {
    private let arrivals = Atomic<Int>(0)
    private let secondTaken = DispatchSemaphore(value: 0)
    private let bound: Duration
    private let onHold: @Sendable () -> Void

    init(bound: Duration, onHold: @escaping @Sendable () -> Void) {
        self.bound = bound
        self.onHold = onHold
    }

    /// A write arrives: the first one waits here. Returns the write's number, for `taken(_:)`.
    func arrive() -> Int {
        let number = self.arrivals.add(1, ordering: .relaxed).newValue
        if number == 1 {
            self.onHold()
            let (seconds, attoseconds) = self.bound.components
            let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
            _ = self.secondTaken.wait(timeout: .now() + .nanoseconds(nanoseconds))
        }
        return number
    }

    /// Write `number` was taken (or refused): the second one lets the first go on.
    func taken(_ number: Int) {
        if number == 2 { self.secondTaken.signal() }
    }
}
#endif
