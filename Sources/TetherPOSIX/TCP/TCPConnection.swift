#if os(Linux)
import Glibc

/// A connected, non-blocking TCP socket driven by an `EventLoop`.
///
/// - Reading starts when a handler is installed with `setHandler(_:)` (on the loop thread); until
///   then the kernel buffers what arrives. The handler receives each chunk read and then exactly
///   one `ended(_:on:)`.
/// - Writing queues bytes and flushes them as the socket becomes writable (the loop watches for
///   writability only while bytes are pending). Every write either completes or fails with a
///   `SocketError`; nothing is dropped silently. Writes after the connection ended fail `.closed`.
/// - The descriptor is closed exactly once: after `close()` has flushed, on `reset()`, after the
///   peer's end of stream has been seen and pending writes flushed, or on an error.
///
/// All public methods may be called from any thread; off the loop they hop onto it, keeping
/// their order. Callbacks (handler calls, write completions) run on the loop thread.
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

    /// Queues `bytes` for sending.
    /// - Parameter completion: called on the loop thread with `.success` once all of `bytes` has
    ///   been handed to the kernel, or with the error that stopped it (`.closed` after the end).
    ///   Never called from inside this `write` call.
    public func write(
        _ bytes: [UInt8],
        completion: TCPConnection.WriteCompletion? = nil
    ) {
        if self.loop.inEventLoop {
            bytes.withUnsafeBytes { self.core.value.write($0, array: bytes, completion: completion, owner: self) }
        } else {
            let accepted = self.loop.execute { [self] in
                bytes.withUnsafeBytes { self.core.value.write($0, array: bytes, completion: completion, owner: self) }
            }
            if !accepted { completion?(.failure(.closed)) }
        }
    }

    /// Queues borrowed bytes for sending without an intermediate array: the bytes are written to
    /// the kernel at once as far as it takes them, and only a remainder is copied. Loop thread only.
    /// - Parameter completion: as in `write(_:completion:)`.
    public func write(
        borrowing bytes: UnsafeRawBufferPointer,
        completion: TCPConnection.WriteCompletion? = nil
    ) {
        precondition(self.loop.inEventLoop, "TCPConnection.write(borrowing:) must be called on the loop thread")
        self.core.value.write(bytes, array: nil, completion: completion, owner: self)
    }

    /// Sends `bytes` and returns once they were all handed to the kernel.
    /// - Throws: the `SocketError` that stopped the write (`.closed` after the end).
    public func send(_ bytes: [UInt8]) async throws(SocketError) {
        let result: Result<Void, SocketError> = await withCheckedContinuation { continuation in
            self.write(bytes) { continuation.resume(returning: $0) }
        }
        try result.get()
    }

    /// Graceful close: stops reading at once, flushes pending writes, then closes the descriptor
    /// (FIN) and reports `.closedLocally` (or the error that stopped the flush). Idempotent; no
    /// effect once the connection ended. A peer that never reads keeps the flush pending: use
    /// `reset()` after your own timeout.
    public func close() {
        self.onLoop { core, owner in core.close(owner: owner) }
    }

    /// Abortive close: discards pending writes (their completions get `.closed`) and closes with
    /// `SO_LINGER` 0 so the peer sees RST (`SocketError.reset`). Reports `.closedLocally` unless the
    /// connection already ended. Idempotent.
    public func reset() {
        self.onLoop { core, owner in core.reset(owner: owner) }
    }

    /// Half-close: after pending writes are flushed, sends FIN (`shutdown(SHUT_WR)`) while reading
    /// goes on until the peer's end of stream. Later writes fail with `.closed`.
    public func shutdownOutput() {
        self.onLoop { core, owner in core.shutdownOutput(owner: owner) }
    }

    /// Stops reading: the kernel buffers what arrives and, once its buffer is full, TCP flow control
    /// slows the peer down. Use it when the consumer of the bytes falls behind. An end of stream or
    /// error is noticed only after `resumeReading()` (a reset is still seen by a pending write).
    public func pauseReading() {
        self.onLoop { core, owner in core.setReadingPaused(true, owner: owner) }
    }

    /// Resumes reading after `pauseReading()`.
    public func resumeReading() {
        self.onLoop { core, owner in core.setReadingPaused(false, owner: owner) }
    }

    private func onLoop(_ body: @escaping @Sendable (ConnectionCore, TCPConnection) -> Void) {
        if self.loop.inEventLoop {
            body(self.core.value, self)
        } else {
            self.loop.execute { [self] in body(self.core.value, self) }
        }
    }

    /// Bytes queued but not yet handed to the kernel. Loop thread only.
    var pendingWriteBytes: Int { self.core.value.pendingByteCount }

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

/// The connection's state. Used only on the loop thread (it lives in a `LoopBound`).
private final class ConnectionCore {
    private let descriptor: Int32
    private var descriptorClosed = false
    private var handler: (any TCPConnectionHandler)?
    /// The loop registration (which keeps the owner alive); see `updateInterest`.
    private var registrationID: UInt64?
    /// What epoll watches the descriptor for; empty when it is not in epoll.
    private var watchedInterest: Interest = []
    private var pending: [PendingWrite] = []
    private var pendingHead = 0
    private(set) var pendingByteCount = 0
    /// `close()` was called, or the peer's end of stream was seen: close after the flush.
    private var closeAfterFlush = false
    private var writeSide = WriteSide.open
    private var readingPaused = false
    /// The end, once known. Set exactly once.
    private var end: TCPConnection.End?
    private var endDelivered = false
    private var endDeliveryScheduled = false

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
    private var hasPendingWrites: Bool { self.pendingHead < self.pending.count }
    private var acceptsWrites: Bool { self.end == nil && !self.closeAfterFlush && self.writeSide == .open }

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
        if !self.descriptorClosed, readiness.writable || (readiness.hangUp && self.hasPendingWrites) {
            self.flush(owner: owner, deferred: false)
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
        if !self.hasPendingWrites { self.closeDescriptor(owner: owner) }
    }

    // MARK: Writing

    /// Writes `bytes` at once as far as the kernel takes them and queues the rest: `array` itself
    /// when the bytes are an array's (no copy), otherwise a copy of the remainder.
    func write(
        _ bytes: UnsafeRawBufferPointer,
        array: [UInt8]?,
        completion: TCPConnection.WriteCompletion?,
        owner: TCPConnection
    ) {
        guard self.acceptsWrites else {
            self.complete(completion, with: .failure(.closed), owner: owner, deferred: true)
            return
        }
        var written = 0
        if !self.hasPendingWrites {
            switch self.sendNow(bytes) {
            case .success(let count):
                written = count
            case .failure(let error):
                self.complete(completion, with: .failure(error), owner: owner, deferred: true)
                self.fail(error, owner: owner, deferred: true)
                return
            }
        }
        if written == bytes.count {
            self.complete(completion, with: .success(()), owner: owner, deferred: true)
            return
        }
        let pending = if let array {
            PendingWrite(bytes: array, offset: written, completion: completion)
        } else {
            PendingWrite(
                bytes: Array(UnsafeRawBufferPointer(rebasing: bytes[written...])),
                offset: 0,
                completion: completion
            )
        }
        self.enqueue(pending, owner: owner)
    }

    private func enqueue(_ write: PendingWrite, owner: TCPConnection) {
        self.pending.append(write)
        self.pendingByteCount += write.bytes.count - write.offset
        self.updateInterest(owner: owner)
    }

    /// Sends as much as the kernel takes now. `.success(n)` with `n` possibly short (0 on EAGAIN).
    private func sendNow(_ bytes: UnsafeRawBufferPointer) -> Result<Int, SocketError> {
        var total = 0
        while total < bytes.count {
            let remaining = bytes.count - total
            let count = Glibc.send(self.descriptor, bytes.baseAddress! + total, remaining, Int32(MSG_NOSIGNAL))
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

    /// Writes pending bytes until the kernel pushes back; completes finished writes; then performs
    /// a requested close or output shutdown once everything is out.
    private func flush(owner: TCPConnection, deferred: Bool) {
        while self.hasPendingWrites {
            let head = self.pending[self.pendingHead]
            let result = head.bytes.withUnsafeBytes { bytes in
                self.sendNow(UnsafeRawBufferPointer(rebasing: bytes[head.offset...]))
            }
            switch result {
            case .failure(let error):
                self.fail(error, owner: owner, deferred: deferred)
                return
            case .success(let count):
                self.pendingByteCount -= count
                if head.offset + count < head.bytes.count {
                    self.pending[self.pendingHead].offset += count
                    return
                }
                self.pending[self.pendingHead] = PendingWrite(bytes: [], offset: 0, completion: nil)
                self.pendingHead += 1
                if self.pendingHead >= 64, self.pendingHead * 2 >= self.pending.count {
                    self.pending.removeFirst(self.pendingHead)
                    self.pendingHead = 0
                }
                self.complete(head.completion, with: .success(()), owner: owner, deferred: deferred)
                if self.descriptorClosed { return }
            }
        }
        self.pending.removeAll(keepingCapacity: self.pending.count <= 16)
        self.pendingHead = 0
        self.afterFlush(owner: owner, deferred: deferred)
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
        _ completion: TCPConnection.WriteCompletion?,
        with result: Result<Void, SocketError>,
        owner: TCPConnection,
        deferred: Bool
    ) {
        guard let completion else { return }
        if deferred {
            if !owner.loop.execute({ completion(result) }) { completion(result) }
        } else {
            completion(result)
        }
    }

    // MARK: Closing

    func close(owner: TCPConnection) {
        guard self.end == nil, !self.closeAfterFlush, !self.descriptorClosed else { return }
        self.closeAfterFlush = true
        if self.hasPendingWrites {
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
        guard self.acceptsWrites else { return }
        self.writeSide = .shutdownAfterFlush
        if !self.hasPendingWrites { self.afterFlush(owner: owner, deferred: true) }
    }

    /// Ends the connection with `error`: pending writes fail with it, the descriptor is closed.
    func fail(_ error: SocketError, owner: TCPConnection, deferred: Bool) {
        guard !self.descriptorClosed else { return }
        self.failPendingWrites(error, owner: owner, deferred: deferred)
        self.closeDescriptor(owner: owner)
        self.recordEnd(.failed(error), owner: owner, deferred: deferred)
    }

    private func failPendingWrites(_ error: SocketError, owner: TCPConnection, deferred: Bool) {
        let failed = self.pending[self.pendingHead...]
        self.pending.removeAll()
        self.pendingHead = 0
        self.pendingByteCount = 0
        for write in failed {
            self.complete(write.completion, with: .failure(error), owner: owner, deferred: deferred)
        }
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
    private func updateInterest(owner: TCPConnection) {
        guard !self.descriptorClosed else { return }
        var interest: Interest = []
        if self.isReading { interest.insert(.readable) }
        if self.hasPendingWrites { interest.insert(.writable) }
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
