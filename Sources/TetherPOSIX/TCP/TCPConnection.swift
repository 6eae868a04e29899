#if os(Linux)
import Glibc
import Synchronization

/// A connected, non-blocking TCP socket driven by an `EventLoop`.
///
/// - Reading starts when a handler is installed with `setHandler(_:)` (on the loop thread); until
///   then the kernel buffers what arrives. The handler receives each chunk read and then exactly
///   one `ended(_:on:)`.
/// - Writing hands bytes to the kernel at once, on the calling thread, when nothing is queued
///   before them; what the kernel does not take is queued and flushed by the loop as the socket
///   becomes writable (the loop watches for writability only while bytes are pending). Every
///   write either completes or fails with a `SocketError`; nothing is dropped silently. Writes
///   after the connection ended, after `close()`, or after a sealing write fail `.closed`.
/// - The descriptor is closed exactly once: after `close()` has flushed, on `reset()`, after the
///   peer's end of stream has been seen and pending writes flushed, or on an error.
///
/// All public methods may be called from any thread. Writes from one thread keep their order
/// (they pass through one lock, which also keeps each write's bytes contiguous on the wire);
/// other calls hop onto the loop, keeping their order. Callbacks (handler calls, write
/// completions) run on the loop thread.
public final class TCPConnection: Sendable, CustomStringConvertible {
    /// How a connection ended, as reported once to its handler.
    public enum End: Equatable, Sendable, CustomStringConvertible {
        /// The peer closed its side (read returned 0). Pending writes are still flushed, then the
        /// descriptor is closed.
        case endOfStream
        /// `close()` or `reset()` was called on this side.
        case closedLocally
        /// A socket error, for example `.reset` when the peer sent RST, or `.closed` when the loop
        /// shut down.
        case failed(SocketError)

        public var description: String {
            switch self {
            case .endOfStream: "end of stream"
            case .closedLocally: "closed locally"
            case .failed(let error): "failed: \(error)"
            }
        }
    }

    /// Called on the loop thread when a write was fully handed to the kernel, or with the error.
    public typealias WriteCompletion = @Sendable (Result<Void, SocketError>) -> Void

    /// The loop whose thread runs this connection's I/O and callbacks.
    public let loop: EventLoop
    /// The local address, when the kernel reports one.
    public let localAddress: SocketAddress?
    /// The peer's address, when the kernel reports one.
    public let remoteAddress: SocketAddress?
    /// The socket's descriptor number (for tests; closed when the connection ends).
    let descriptor: Int32
    private let core: LoopBound<ConnectionCore>
    /// The write side, shared by every writing thread and the loop. Whoever holds the lock may call
    /// `send` on the descriptor; the loop clears `descriptorOpen` under it before closing the
    /// descriptor, so a writer can never reach a closed (possibly reused) descriptor number.
    fileprivate let output = Mutex(Output())

    /// Takes ownership of a connected, non-blocking socket.
    init(descriptor: Int32, loop: EventLoop) {
        self.loop = loop
        self.descriptor = descriptor
        self.localAddress = Socket.address(of: descriptor, peer: false)
        self.remoteAddress = Socket.address(of: descriptor, peer: true)
        self.core = LoopBound(ConnectionCore(descriptor: descriptor), loop: loop)
    }

    deinit {
        // Only reached while the loop does not hold the connection: no handler was installed (or it
        // already got its end) and nothing is pending, so closing the descriptor is all that is left.
        let core = self.core
        let loop = self.loop
        if loop.inEventLoop {
            core.value.abandon(loop: loop)
        } else if !loop.execute({ core.value.abandon(loop: loop) }) {
            core.valueAfterLoopExit.abandon(loop: loop)
        }
    }

    public var description: String {
        "TCPConnection(\(self.localAddress?.description ?? "?") -> \(self.remoteAddress?.description ?? "?"))"
    }

    /// Installs the handler and starts reading. Call on the loop thread (for example inside
    /// `loop.execute` after `connect`, or inside a listener's `onAccept`), and create the handler
    /// there too. At most once per connection. If the connection already ended, `ended` is
    /// delivered to the handler on the next loop turn.
    public func setHandler(_ handler: any TCPConnectionHandler) {
        precondition(self.loop.inEventLoop, "TCPConnection.setHandler must be called on the loop thread")
        self.core.value.install(handler, owner: self)
    }

    /// Hands the connection to `handler` from now on: the next bytes and the end go to it. Call on the loop thread,
    /// after `setHandler` and before the end was delivered (a protocol that starts another one on the same
    /// connection, such as TLS after a proxy's CONNECT answer).
    public func replaceHandler(_ handler: any TCPConnectionHandler) {
        precondition(self.loop.inEventLoop, "TCPConnection.replaceHandler must be called on the loop thread")
        self.core.value.replace(handler)
    }

    /// Writes `bytes`: at once on the calling thread as far as the kernel takes them, the rest
    /// queued (the array itself, no copy) and flushed by the loop.
    /// - Parameters:
    ///   - sealing: this is the last write the connection accepts (a protocol's closing frame):
    ///     later writes fail `.closed`, atomically with this one, while reading goes on and the
    ///     descriptor stays open until `close()`, `reset()` or the end.
    ///   - completion: called on the loop thread with `.success` once all of `bytes` has been
    ///     handed to the kernel, or with the error that stopped it (`.closed` after the end).
    ///     Never called from inside this `write` call.
    public func write(
        _ bytes: [UInt8],
        sealing: Bool = false,
        completion: TCPConnection.WriteCompletion? = nil
    ) {
        bytes.withUnsafeBytes { raw in
            self.write(raw, array: bytes, sealing: sealing, completion: completion, reportsSuccess: true)
        }
    }

    /// Writes borrowed bytes without an intermediate array: the bytes are written to the kernel at
    /// once as far as it takes them, and only a remainder is copied.
    /// - Parameters: as in `write(_:sealing:completion:)`.
    public func write(
        borrowing bytes: UnsafeRawBufferPointer,
        sealing: Bool = false,
        completion: TCPConnection.WriteCompletion? = nil
    ) {
        self.write(bytes, array: nil, sealing: sealing, completion: completion, reportsSuccess: true)
    }

    /// Writes `bytes` like `write(_:sealing:completion:)` but reports only a failure, so that a
    /// write the kernel takes at once costs no loop turn.
    /// - Parameter onFailure: called on the loop thread with the error when the write is refused
    ///   (`.closed`) or fails, now or while queued. Never called from inside this call.
    public func write(_ bytes: [UInt8], onFailure: @escaping @Sendable (SocketError) -> Void) {
        let completion: TCPConnection.WriteCompletion = { result in
            if case .failure(let error) = result { onFailure(error) }
        }
        bytes.withUnsafeBytes { raw in
            self.write(raw, array: bytes, sealing: false, completion: completion, reportsSuccess: false)
        }
    }

    /// Sends `bytes` and returns once they were all handed to the kernel. When nothing is queued
    /// and the kernel takes them at once, this returns without leaving the calling thread.
    /// - Parameter sealing: as in `write(_:sealing:completion:)`.
    /// - Throws: the `SocketError` that stopped the write (`.closed` once writes are no longer
    ///   accepted).
    public func send(_ bytes: [UInt8], sealing: Bool = false) async throws(SocketError) {
        try await self.beginSend(bytes, sealing: sealing).finish()
    }

    /// The synchronous half of `send`: writes or queues `bytes` now, on the calling thread (so that a caller
    /// holding its own lock keeps its writes in order), and returns what is left to await.
    func beginSend(_ bytes: [UInt8], sealing: Bool) -> StartedSend {
        var waiter: WriteWaiter?
        let outcome = bytes.withUnsafeBytes { raw in
            self.output.withLock { output in
                output.write(raw, array: bytes, sealing: sealing, descriptor: self.descriptor) {
                    let created = WriteWaiter()
                    waiter = created
                    return { created.finish($0) }
                }
            }
        }
        switch outcome {
        case .written:
            return .done
        case .refused:
            return .failed(.closed)
        case .failed(let error):
            self.broke(error)
            return .failed(error)
        case .queued(let first):
            if first { self.watchWritability() }
            return .waiting(waiter!)
        }
    }

    /// The write behind the callback variants: writes under the output lock, then reports the
    /// immediate outcome. It completes the write on the next loop turn unless queued (a success only
    /// when `reportsSuccess`), asks the loop to watch for writability when it started the queue, and
    /// ends the connection when the kernel refused the bytes.
    private func write(
        _ bytes: UnsafeRawBufferPointer,
        array: [UInt8]?,
        sealing: Bool,
        completion: TCPConnection.WriteCompletion?,
        reportsSuccess: Bool
    ) {
        let outcome = self.output.withLock { output in
            output.write(bytes, array: array, sealing: sealing, descriptor: self.descriptor) { completion }
        }
        switch outcome {
        case .written:
            if reportsSuccess { self.completeLater(completion, with: .success(())) }
        case .queued(let first):
            if first { self.watchWritability() }
        case .refused:
            self.completeLater(completion, with: .failure(.closed))
        case .failed(let error):
            self.completeLater(completion, with: .failure(error))
            self.broke(error)
        }
    }

    /// Calls `completion` on a later loop turn (at once if the loop has shut down).
    fileprivate func completeLater(
        _ completion: TCPConnection.WriteCompletion?, with result: Result<Void, SocketError>
    ) {
        guard let completion else { return }
        if !self.loop.execute({ completion(result) }) { completion(result) }
    }

    /// The first write of a queue was left partly unwritten: the loop must watch for writability.
    private func watchWritability() {
        self.onLoop { core, owner in core.updateInterest(owner: owner) }
    }

    /// A `send` call failed: the connection is broken, and the loop ends it with the error.
    private func broke(_ error: SocketError) {
        let core = self.core
        if self.loop.inEventLoop {
            core.value.fail(error, owner: self, deferred: true)
        } else {
            self.loop.execute { [self] in core.value.fail(error, owner: self, deferred: false) }
        }
    }

    /// Graceful close: stops reading at once, flushes pending writes, then closes the descriptor
    /// (FIN) and reports `.closedLocally` (or the error that stopped the flush). Idempotent; no
    /// effect once the connection ended. A peer that never reads keeps the flush pending: use
    /// `reset()` after your own timeout.
    public func close() {
        self.refuseWrites()
        self.onLoop { core, owner in core.close(owner: owner) }
    }

    /// Abortive close: discards pending writes (their completions get `.closed`) and closes with
    /// `SO_LINGER` 0 so the peer sees RST (`SocketError.reset`). Reports `.closedLocally` unless the
    /// connection already ended. Idempotent.
    public func reset() {
        self.refuseWrites()
        self.onLoop { core, owner in core.reset(owner: owner) }
    }

    /// Half-close: after pending writes are flushed, sends FIN (`shutdown(SHUT_WR)`) while reading
    /// goes on until the peer's end of stream. Later writes fail with `.closed`.
    public func shutdownOutput() {
        self.refuseWrites()
        self.onLoop { core, owner in core.shutdownOutput(owner: owner) }
    }

    /// Stops reading (from another thread: once the loop has run the work queued before it): the kernel buffers
    /// what arrives and, once its buffer is full, TCP flow control
    /// slows the peer down. Use it when the consumer of the bytes falls behind. An end of stream or
    /// error is noticed only after `resumeReading()` (a reset is still seen by a pending write).
    public func pauseReading() {
        self.onLoop { core, owner in core.setReadingPaused(true, owner: owner) }
    }

    /// Resumes reading after `pauseReading()`.
    public func resumeReading() {
        self.onLoop { core, owner in core.setReadingPaused(false, owner: owner) }
    }

    /// Writes made after `close()`, `reset()` or `shutdownOutput()` returned fail `.closed`, even from another
    /// thread before the loop has run the call.
    private func refuseWrites() {
        self.output.withLock { $0.accepting = false }
    }

    private func onLoop(_ body: @escaping @Sendable (ConnectionCore, TCPConnection) -> Void) {
        if self.loop.inEventLoop {
            body(self.core.value, self)
        } else {
            self.loop.execute { [self] in body(self.core.value, self) }
        }
    }

    /// Bytes queued but not yet handed to the kernel.
    public var queuedWriteBytes: Int { self.output.withLock { $0.byteCount } }

    /// Calls `body` on the loop thread once at most `limit` bytes are queued for the kernel: on a later loop turn
    /// when that is already so, otherwise after the flush that brings the queue down to it, or when the queue is
    /// discarded because the connection ended. Called exactly once. This is how a writer that filled the queue
    /// waits for room (a socket stops being read while its replies cannot go out; a sender suspends).
    public func whenQueuedWrites(atMost limit: Int, _ body: @escaping @Sendable () -> Void) {
        let now = self.output.withLock { output -> Bool in
            guard output.byteCount > limit, output.descriptorOpen else { return true }
            output.drainWaiters.append((limit, body))
            return false
        }
        if now { self.completeLater({ _ in body() }, with: .success(())) }
    }

    fileprivate func deliverDeferredEnd() {
        self.core.value.deliverEnd(owner: self)
    }
}

extension TCPConnection: LoopSelectable {
    func ready(_ readiness: Readiness) {
        self.core.value.ready(readiness, owner: self)
    }

    func loopShuttingDown() {
        self.core.value.fail(.closed, owner: self, deferred: false)
    }
}

/// A write waiting for the socket to become writable.
private struct PendingWrite {
    var bytes: [UInt8]
    var offset: Int
    let completion: TCPConnection.WriteCompletion?
}

/// What a write did at once, under the output lock.
private enum WriteOutcome {
    /// The kernel took all of it.
    case written
    /// Some or all of it waits in the queue; `first` when it started the queue.
    case queued(first: Bool)
    /// Writes are no longer accepted (`.closed`).
    case refused
    /// `send` failed: the connection is broken.
    case failed(SocketError)
}

/// The write side of a connection, behind `TCPConnection.output`'s lock.
private struct Output {
    var pending: [PendingWrite] = []
    var head = 0
    var byteCount = 0
    /// New writes are taken. Cleared for good by a sealing write, `close()`, `shutdownOutput()` and the end.
    var accepting = true
    /// The descriptor may be written to. Cleared (under the lock) before the loop closes it.
    var descriptorOpen = true
    /// Who waits for the queue to shrink to a level (`TCPConnection.whenQueuedWrites(atMost:_:)`).
    var drainWaiters: [(limit: Int, body: @Sendable () -> Void)] = []

    var hasPending: Bool { self.head < self.pending.count }

    /// Writes `bytes` at once as far as the kernel takes them, when nothing is queued before them, and queues
    /// the rest: `array` itself when the bytes are an array's (no copy), otherwise a copy of the remainder.
    /// `completion` is asked for only when something is queued.
    mutating func write(
        _ bytes: UnsafeRawBufferPointer,
        array: [UInt8]?,
        sealing: Bool,
        descriptor: Int32,
        completion: () -> TCPConnection.WriteCompletion?
    ) -> WriteOutcome {
        guard self.accepting, self.descriptorOpen else { return .refused }
        if sealing { self.accepting = false }
        let first = !self.hasPending
        var written = 0
        if first {
            switch Self.sendNow(bytes, descriptor: descriptor) {
            case .success(let count):
                written = count
            case .failure(let error):
                self.accepting = false
                return .failed(error)
            }
        }
        if written == bytes.count { return .written }
        let write = if let array {
            PendingWrite(bytes: array, offset: written, completion: completion())
        } else {
            PendingWrite(
                bytes: Array(UnsafeRawBufferPointer(rebasing: bytes[written...])),
                offset: 0,
                completion: completion()
            )
        }
        self.pending.append(write)
        self.byteCount += write.bytes.count - write.offset
        return .queued(first: first)
    }

    /// Writes queued bytes until the kernel pushes back, appending the completions of finished writes to
    /// `completed`. Returns `nil` once the queue is empty, `false` while bytes remain, or the error.
    mutating func flush(
        descriptor: Int32,
        completed: inout [TCPConnection.WriteCompletion]
    ) -> Result<Bool, SocketError> {
        while self.hasPending {
            let head = self.pending[self.head]
            let result = head.bytes.withUnsafeBytes { bytes in
                Self.sendNow(UnsafeRawBufferPointer(rebasing: bytes[head.offset...]), descriptor: descriptor)
            }
            switch result {
            case .failure(let error):
                self.accepting = false
                return .failure(error)
            case .success(let count):
                self.byteCount -= count
                self.releaseDrainWaiters(into: &completed)
                if head.offset + count < head.bytes.count {
                    self.pending[self.head].offset += count
                    return .success(false)
                }
                self.pending[self.head] = PendingWrite(bytes: [], offset: 0, completion: nil)
                self.head += 1
                if self.head >= 64, self.head * 2 >= self.pending.count {
                    self.pending.removeFirst(self.head)
                    self.head = 0
                }
                if let completion = head.completion { completed.append(completion) }
            }
        }
        self.pending.removeAll(keepingCapacity: self.pending.count <= 16)
        self.head = 0
        return .success(true)
    }

    /// Empties the queue, returning the completions still waiting (drain waiters' among them).
    mutating func discardPending() -> [TCPConnection.WriteCompletion] {
        var completions = self.pending[self.head...].compactMap(\.completion)
        self.pending.removeAll()
        self.head = 0
        self.byteCount = 0
        self.releaseDrainWaiters(into: &completions)
        return completions
    }

    /// Moves the drain waiters whose level the queue has reached to `completed`.
    mutating func releaseDrainWaiters(into completed: inout [TCPConnection.WriteCompletion]) {
        guard !self.drainWaiters.isEmpty else { return }
        let byteCount = self.byteCount
        self.drainWaiters.removeAll { waiter in
            guard byteCount <= waiter.limit else { return false }
            let body = waiter.body
            completed.append { _ in body() }
            return true
        }
    }

    /// Sends as much as the kernel takes now. `.success(n)` with `n` possibly short (0 on EAGAIN).
    private static func sendNow(_ bytes: UnsafeRawBufferPointer, descriptor: Int32) -> Result<Int, SocketError> {
        var total = 0
        while total < bytes.count {
            let remaining = bytes.count - total
            let count = Glibc.send(descriptor, bytes.baseAddress! + total, remaining, Int32(MSG_NOSIGNAL))
            if count >= 0 {
                total += count
                continue
            }
            let code = errno
            if code == EINTR { continue }
            if code == EAGAIN || code == EWOULDBLOCK { break }
            return .failure(SocketError(operation: "send", errno: code))
        }
        return .success(total)
    }
}

/// A send begun with `TCPConnection.beginSend`: done, refused or failed, or waiting for the kernel.
enum StartedSend: Sendable {
    case done
    case failed(SocketError)
    case waiting(WriteWaiter)

    /// Returns once the bytes were all handed to the kernel.
    /// - Throws: the error that stopped the write.
    func finish() async throws(SocketError) {
        switch self {
        case .done: return
        case .failed(let error): throw error
        case .waiting(let waiter): try await waiter.result().get()
        }
    }
}

/// Where `TCPConnection.send` waits for a write the kernel did not take at once.
final class WriteWaiter: Sendable {
    private enum State {
        case waiting(CheckedContinuation<Result<Void, SocketError>, Never>?)
        case finished(Result<Void, SocketError>)
    }

    private let state = Mutex(State.waiting(nil))

    func finish(_ result: Result<Void, SocketError>) {
        let continuation = self.state.withLock { state -> CheckedContinuation<Result<Void, SocketError>, Never>? in
            guard case .waiting(let continuation) = state else { return nil }
            state = .finished(result)
            return continuation
        }
        continuation?.resume(returning: result)
    }

    func result() async -> Result<Void, SocketError> {
        await withCheckedContinuation { continuation in
            let finished = self.state.withLock { state -> Result<Void, SocketError>? in
                switch state {
                case .waiting:
                    state = .waiting(continuation)
                    return nil
                case .finished(let result):
                    return result
                }
            }
            if let finished { continuation.resume(returning: finished) }
        }
    }
}

/// The connection's reading and lifecycle state. Used only on the loop thread (it lives in a `LoopBound`); the
/// write queue is the owner's `output`.
private final class ConnectionCore {
    private let descriptor: Int32
    private var descriptorClosed = false
    private var handler: (any TCPConnectionHandler)?
    /// The loop registration (which keeps the owner alive); see `updateInterest`.
    private var registrationID: UInt64?
    /// What epoll watches the descriptor for; empty when it is not in epoll.
    private var watchedInterest: Interest = []
    /// `close()` was called, or the peer's end of stream was seen: close after the flush.
    private var closeAfterFlush = false
    private var writeSide = WriteSide.open
    private var readingPaused = false
    /// The end, once known. Set exactly once.
    private var end: TCPConnection.End?
    private var endDelivered = false
    private var endDeliveryScheduled = false
    /// Completions collected under the output lock by `flush`, called after it is released.
    private var completed: [TCPConnection.WriteCompletion] = []

    private enum WriteSide {
        case open
        case shutdownAfterFlush
        case shut
    }

    init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    private var isReading: Bool {
        self.handler != nil && self.end == nil && !self.closeAfterFlush && !self.readingPaused
    }

    private func hasPendingWrites(_ owner: TCPConnection) -> Bool {
        owner.output.withLock { $0.hasPending }
    }

    /// Stops taking writes; returns whether bytes are still queued.
    private func stopAcceptingWrites(_ owner: TCPConnection) -> Bool {
        owner.output.withLock { output in
            output.accepting = false
            return output.hasPending
        }
    }

    // MARK: Handler

    func install(_ handler: any TCPConnectionHandler, owner: TCPConnection) {
        precondition(self.handler == nil && !self.endDelivered, "TCPConnection.setHandler called twice")
        self.handler = handler
        if self.end != nil {
            self.scheduleEndDelivery(owner: owner)
        } else {
            self.updateInterest(owner: owner)
        }
    }

    func replace(_ handler: any TCPConnectionHandler) {
        precondition(self.handler != nil, "TCPConnection.replaceHandler needs an installed handler")
        self.handler = handler
    }

    func deliverEnd(owner: TCPConnection) {
        self.endDeliveryScheduled = false
        guard let end = self.end, !self.endDelivered, let handler = self.handler else { return }
        self.endDelivered = true
        self.handler = nil
        handler.ended(end, on: owner)
    }

    private func scheduleEndDelivery(owner: TCPConnection) {
        guard self.handler != nil, !self.endDeliveryScheduled else { return }
        self.endDeliveryScheduled = true
        owner.loop.execute { owner.deliverDeferredEnd() }
    }

    /// Records the end (first one wins) and tells the handler now, or on the next loop turn when we
    /// are inside the owner's own call.
    private func recordEnd(_ end: TCPConnection.End, owner: TCPConnection, deferred: Bool) {
        guard self.end == nil else { return }
        self.end = end
        _ = self.stopAcceptingWrites(owner)
        if deferred {
            self.scheduleEndDelivery(owner: owner)
        } else {
            self.deliverEnd(owner: owner)
        }
    }

    func setReadingPaused(_ paused: Bool, owner: TCPConnection) {
        guard self.readingPaused != paused else { return }
        self.readingPaused = paused
        self.updateInterest(owner: owner)
    }

    // MARK: Readiness

    func ready(_ readiness: Readiness, owner: TCPConnection) {
        guard !self.descriptorClosed else { return }
        if self.isReading, readiness.readable || readiness.hangUp || readiness.error {
            // With an error pending, read everything first: bytes the peer sent before a reset are
            // delivered before the end, and `recv` then reports the error itself.
            self.readAvailable(owner: owner, untilDrained: readiness.error)
        }
        if !self.descriptorClosed, readiness.error {
            let code = Socket.pendingError(self.descriptor)
            let error = SocketError(operation: "socket", errno: code == 0 ? ECONNRESET : code)
            self.fail(error, owner: owner, deferred: false)
            return
        }
        if !self.descriptorClosed, readiness.writable || (readiness.hangUp && self.hasPendingWrites(owner)) {
            self.flush(owner: owner)
        }
        if !self.descriptorClosed {
            self.updateInterest(owner: owner)
        }
    }

    /// Reads a few buffers' worth (a bounded amount per turn keeps the loop fair to other sockets;
    /// level-triggered epoll reports the rest on the next turn), or everything when `untilDrained`.
    private func readAvailable(owner: TCPConnection, untilDrained: Bool) {
        let buffer = owner.loop.readBuffer
        var reads = 0
        while untilDrained || reads < 4 {
            reads += 1
            let count = recv(self.descriptor, buffer.baseAddress, buffer.count, 0)
            if count > 0 {
                self.handler?.received(UnsafeRawBufferPointer(rebasing: buffer[..<count]), on: owner)
                guard self.isReading, !self.descriptorClosed else { return }
                if count < buffer.count, !untilDrained { return }
            } else if count == 0 {
                self.peerEnded(owner: owner)
                return
            } else {
                let code = errno
                if code == EINTR { continue }
                if code == EAGAIN || code == EWOULDBLOCK { return }
                self.fail(SocketError(operation: "recv", errno: code), owner: owner, deferred: false)
                return
            }
        }
    }

    private func peerEnded(owner: TCPConnection) {
        self.closeAfterFlush = true
        self.recordEnd(.endOfStream, owner: owner, deferred: false)
        guard !self.descriptorClosed else { return }
        if !self.hasPendingWrites(owner) { self.closeDescriptor(owner: owner) }
    }

    // MARK: Writing

    /// Writes queued bytes until the kernel pushes back; completes finished writes (outside the lock, so that
    /// a completion may write again); then performs a requested close or output shutdown once all is out.
    private func flush(owner: TCPConnection) {
        let result = owner.output.withLock { output in
            output.flush(descriptor: self.descriptor, completed: &self.completed)
        }
        if !self.completed.isEmpty {
            let completed = self.completed
            self.completed.removeAll(keepingCapacity: true)
            for completion in completed {
                completion(.success(()))
            }
        }
        switch result {
        case .failure(let error):
            self.fail(error, owner: owner, deferred: false)
        case .success(true):
            if !self.descriptorClosed { self.afterFlush(owner: owner, deferred: false) }
        case .success(false):
            break
        }
    }

    private func afterFlush(owner: TCPConnection, deferred: Bool) {
        if self.closeAfterFlush {
            self.recordEnd(.closedLocally, owner: owner, deferred: deferred)
            self.closeDescriptor(owner: owner)
        } else if self.writeSide == .shutdownAfterFlush {
            self.writeSide = .shut
            _ = Glibc.shutdown(self.descriptor, Int32(SHUT_WR))
        }
    }

    private func complete(
        _ completions: [TCPConnection.WriteCompletion],
        with result: Result<Void, SocketError>,
        owner: TCPConnection,
        deferred: Bool
    ) {
        for completion in completions {
            if deferred {
                owner.completeLater(completion, with: result)
            } else {
                completion(result)
            }
        }
    }

    // MARK: Closing

    func close(owner: TCPConnection) {
        guard self.end == nil, !self.closeAfterFlush, !self.descriptorClosed else { return }
        self.closeAfterFlush = true
        if self.stopAcceptingWrites(owner) {
            self.updateInterest(owner: owner)  // stop reading, keep flushing
        } else {
            self.afterFlush(owner: owner, deferred: true)
        }
    }

    func reset(owner: TCPConnection) {
        guard !self.descriptorClosed else { return }
        Socket.setLingerZero(self.descriptor)
        self.failPendingWrites(.closed, owner: owner, deferred: true)
        self.recordEnd(.closedLocally, owner: owner, deferred: true)
        self.closeDescriptor(owner: owner)
    }

    func shutdownOutput(owner: TCPConnection) {
        guard self.end == nil, !self.closeAfterFlush, self.writeSide == .open, !self.descriptorClosed else { return }
        self.writeSide = .shutdownAfterFlush
        if !self.stopAcceptingWrites(owner) { self.afterFlush(owner: owner, deferred: true) }
    }

    /// Ends the connection with `error`: pending writes fail with it, the descriptor is closed.
    func fail(_ error: SocketError, owner: TCPConnection, deferred: Bool) {
        guard !self.descriptorClosed else { return }
        self.failPendingWrites(error, owner: owner, deferred: deferred)
        self.closeDescriptor(owner: owner)
        self.recordEnd(.failed(error), owner: owner, deferred: deferred)
    }

    private func failPendingWrites(_ error: SocketError, owner: TCPConnection, deferred: Bool) {
        let failed = owner.output.withLock { output in
            output.accepting = false
            return output.discardPending()
        }
        self.complete(failed, with: .failure(error), owner: owner, deferred: deferred)
    }

    /// The owner was released without being closed while nothing was registered.
    func abandon(loop: EventLoop) {
        guard !self.descriptorClosed else { return }
        self.descriptorClosed = true
        loop.release(self.descriptor)
    }

    private func closeDescriptor(owner: TCPConnection) {
        guard !self.descriptorClosed else { return }
        self.descriptorClosed = true
        owner.output.withLock { output in
            output.accepting = false
            output.descriptorOpen = false
        }
        if let id = self.registrationID {
            try? owner.loop.watch(self.descriptor, id: id, interest: [], previous: self.watchedInterest)
            self.watchedInterest = []
            owner.loop.deregister(id: id)
            self.registrationID = nil
        }
        owner.loop.release(self.descriptor)
    }

    // MARK: Registration

    /// Watches for reading while a handler reads, and for writing only while bytes are pending;
    /// with nothing to watch the descriptor leaves epoll. The loop keeps the connection alive while
    /// a handler is installed (until its end) or bytes are pending, so an installed handler always
    /// gets its end, and a loop shutdown reaches the connection even while reading is paused.
    func updateInterest(owner: TCPConnection) {
        guard !self.descriptorClosed else { return }
        var interest: Interest = []
        if self.isReading { interest.insert(.readable) }
        if self.hasPendingWrites(owner) { interest.insert(.writable) }
        let retain = self.handler != nil || !interest.isEmpty
        do {
            if retain, self.registrationID == nil {
                self.registrationID = try owner.loop.register(owner)
            }
            if let id = self.registrationID, interest != self.watchedInterest {
                try owner.loop.watch(self.descriptor, id: id, interest: interest, previous: self.watchedInterest)
                self.watchedInterest = interest
            }
            if !retain, let id = self.registrationID {
                owner.loop.deregister(id: id)
                self.registrationID = nil
            }
        } catch {
            self.fail(error, owner: owner, deferred: true)
        }
    }
}
#endif
