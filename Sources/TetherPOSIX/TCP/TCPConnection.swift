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
package final class TCPConnection: Sendable, CustomStringConvertible {
    /// How a connection ended, as reported once to its handler.
    package enum End: Equatable, Sendable, CustomStringConvertible {
        /// The peer closed its side (read returned 0). Pending writes are still flushed, then the
        /// descriptor is closed.
        case endOfStream
        /// `close()` or `reset()` was called on this side.
        case closedLocally
        /// A socket error, for example `.reset` when the peer sent RST, or `.closed` when the loop
        /// shut down.
        case failed(SocketError)

        package var description: String {
            switch self {
            case .endOfStream: "end of stream"
            case .closedLocally: "closed locally"
            case .failed(let error): "failed: \(error)"
            }
        }
    }

    /// Called on the loop thread when a write was fully handed to the kernel, or with the error.
    package typealias WriteCompletion = @Sendable (Result<Void, SocketError>) -> Void

    /// The loop whose thread runs this connection's I/O and callbacks.
    package let loop: EventLoop
    /// The local address, when the kernel reports one.
    package let localAddress: SocketAddress?
    /// The peer's address, when the kernel reports one.
    package let remoteAddress: SocketAddress?
    /// The socket's descriptor number (for tests; closed when the connection ends).
    let descriptor: Int32
    /// Reading and the lifecycle, on the loop thread (`TCPConnection+LoopState.swift`).
    let loopState: LoopBound<TCPLoopState>
    /// The write queue, shared by every writing thread and the loop (`TCPConnection+WriteQueue.swift`). Whoever
    /// holds the lock may call `send` on the descriptor; the loop clears `descriptorOpen` under it before closing the
    /// descriptor, so a writer can never reach a closed (possibly reused) descriptor number.
    let output = Mutex(WriteQueue())

    /// Takes ownership of a connected, non-blocking socket.
    init(descriptor: Int32, loop: EventLoop) {
        self.loop = loop
        self.descriptor = descriptor
        self.localAddress = Socket.address(of: descriptor, peer: false)
        self.remoteAddress = Socket.address(of: descriptor, peer: true)
        self.loopState = LoopBound(TCPLoopState(descriptor: descriptor), loop: loop)
    }

    deinit {
        // Only reached while the loop does not hold the connection: no handler was installed (or it
        // already got its end) and nothing is pending, so closing the descriptor is all that is left.
        let state = self.loopState
        let loop = self.loop
        if loop.inEventLoop {
            state.value.abandon(loop: loop)
        } else if !loop.execute({ state.value.abandon(loop: loop) }) {
            state.valueAfterLoopExit.abandon(loop: loop)
        }
    }

    package var description: String {
        "TCPConnection(\(self.localAddress?.description ?? "?") -> \(self.remoteAddress?.description ?? "?"))"
    }

    /// Installs the handler and starts reading. Call on the loop thread (for example inside
    /// `loop.execute` after `connect`, or inside a listener's `onAccept`), and create the handler
    /// there too. At most once per connection. If the connection already ended, `ended` is
    /// delivered to the handler on the next loop turn.
    package func setHandler(_ handler: any TCPConnectionHandler) {
        precondition(self.loop.inEventLoop, "TCPConnection.setHandler must be called on the loop thread")
        self.loopState.value.install(handler, owner: self)
    }

    /// Hands the connection to `handler` from now on: the next bytes and the end go to it. Call on the loop thread,
    /// after `setHandler` and before the end was delivered (a protocol that starts another one on the same
    /// connection, such as TLS after a proxy's CONNECT answer).
    package func replaceHandler(_ handler: any TCPConnectionHandler) {
        precondition(self.loop.inEventLoop, "TCPConnection.replaceHandler must be called on the loop thread")
        self.loopState.value.replace(handler)
    }

    /// The write behind every entry point (`write`, `send`; see `ByteStream`): writes under the output lock at once
    /// as far as the kernel takes the bytes and queues the rest, then reports by `delivery`. It asks the loop to
    /// watch for writability when it started the queue, and ends the connection when the kernel refused the bytes.
    package func startWrite(
        _ bytes: UnsafeRawBufferPointer, array: [UInt8]?, sealing: Bool, delivery: WriteDelivery
    ) -> StartedSend {
        var waiter: WriteWaiter?
        let outcome = self.output.withLock { output in
            output.write(bytes, array: array, sealing: sealing, descriptor: self.descriptor) {
                let (completion, created) = delivery.completionForWaiting()
                waiter = created
                return completion
            }
        }
        switch outcome {
        case .written:
            return delivery.succeeded(on: self.loop)
        case .queued(let first):
            if first { self.watchWritability() }
            return waiter.map(StartedSend.waiting) ?? .done
        case .refused:
            return delivery.failed(.closed, on: self.loop)
        case .failed(let error):
            let started = delivery.failed(error, on: self.loop)
            self.broke(error)
            return started
        }
    }

    /// The first write of a queue was left partly unwritten: the loop must watch for writability.
    private func watchWritability() {
        self.onLoop { state, owner in state.updateInterest(owner: owner) }
    }

    /// A `send` call failed: the connection is broken, and the loop ends it with the error.
    private func broke(_ error: SocketError) {
        let state = self.loopState
        if self.loop.inEventLoop {
            state.value.fail(error, owner: self, deferred: true)
        } else {
            self.loop.execute { [self] in state.value.fail(error, owner: self, deferred: false) }
        }
    }

    /// Graceful close: stops reading at once, flushes pending writes, then closes the descriptor
    /// (FIN) and reports `.closedLocally` (or the error that stopped the flush). Idempotent; no
    /// effect once the connection ended. A peer that never reads keeps the flush pending: use
    /// `reset()` after your own timeout.
    package func close() {
        self.refuseWrites()
        self.onLoop { state, owner in state.close(owner: owner) }
    }

    /// Abortive close: discards pending writes (their completions get `.closed`) and closes with
    /// `SO_LINGER` 0 so the peer sees RST (`SocketError.reset`). Reports `.closedLocally` unless the
    /// connection already ended. Idempotent.
    package func reset() {
        self.refuseWrites()
        self.onLoop { state, owner in state.reset(owner: owner) }
    }

    /// Half-close: after pending writes are flushed, sends FIN (`shutdown(SHUT_WR)`) while reading
    /// goes on until the peer's end of stream. Later writes fail with `.closed`.
    package func shutdownOutput() {
        self.refuseWrites()
        self.onLoop { state, owner in state.shutdownOutput(owner: owner) }
    }

    /// Stops reading (from another thread: once the loop has run the work queued before it): the kernel buffers
    /// what arrives and, once its buffer is full, TCP flow control
    /// slows the peer down. Use it when the consumer of the bytes falls behind. An end of stream or
    /// error is noticed only after `resumeReading()` (a reset is still seen by a pending write).
    package func pauseReading() {
        self.onLoop { state, owner in state.setReadingPaused(true, owner: owner) }
    }

    /// Resumes reading after `pauseReading()`.
    package func resumeReading() {
        self.onLoop { state, owner in state.setReadingPaused(false, owner: owner) }
    }

    /// Writes made after `close()`, `reset()` or `shutdownOutput()` returned fail `.closed`, even from another
    /// thread before the loop has run the call.
    private func refuseWrites() {
        self.output.withLock { $0.accepting = false }
    }

    private func onLoop(_ body: @escaping @Sendable (TCPLoopState, TCPConnection) -> Void) {
        self.loop.runOnLoop { [self] in body(self.loopState.value, self) }
    }

    /// Bytes queued but not yet handed to the kernel.
    package var queuedWriteBytes: Int { self.output.withLock { $0.byteCount } }

    /// Calls `body` on the loop thread once at most `limit` bytes are queued for the kernel: on a later loop turn
    /// when that is already so, otherwise after the flush that brings the queue down to it, or when the queue is
    /// discarded because the connection ended. Called exactly once. This is how a writer that filled the queue
    /// waits for room (a socket stops being read while its replies cannot go out; a sender suspends).
    package func whenQueuedWrites(atMost limit: Int, _ body: @escaping @Sendable () -> Void) {
        let now = self.output.withLock { output -> Bool in
            guard output.byteCount > limit, output.descriptorOpen else { return true }
            output.drainWaiters.append((limit, body))
            return false
        }
        if now { self.loop.completeLater({ _ in body() }, with: .success(())) }
    }

    func deliverDeferredEnd() {
        self.loopState.value.deliverEnd(owner: self)
    }
}

extension TCPConnection: LoopSelectable {
    func ready(_ readiness: Readiness) {
        self.loopState.value.ready(readiness, owner: self)
    }

    func loopShuttingDown() {
        self.loopState.value.fail(.closed, owner: self, deferred: false)
    }
}
#endif
