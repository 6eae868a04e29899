#if os(Linux)
import Glibc

/// The connection's loop state: reading, registration with the loop and the lifecycle (close, reset, half-close,
/// the end). Used only on the loop thread (it lives in a `LoopBound`); the write queue is the owner's `output`.
final class TCPLoopState {
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
                owner.loop.completeLater(completion, with: result)
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
