#if os(Linux)
import Glibc

/// A write waiting for the socket to become writable.
struct PendingWrite {
    var bytes: [UInt8]
    var offset: Int
    let completion: TCPConnection.WriteCompletion?
}

/// The write side of a connection, behind `TCPConnection.output`'s lock: the bytes the kernel has not taken yet, in
/// order, and who waits for them to drain.
struct WriteQueue {
    /// What a write did at once, under the lock.
    enum Outcome {
        /// The kernel took all of it.
        case written
        /// Some or all of it waits in the queue; `first` when it started the queue.
        case queued(first: Bool)
        /// Writes are no longer accepted (`.closed`).
        case refused
        /// `send` failed: the connection is broken.
        case failed(SocketError)
    }

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
    ) -> Outcome {
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
#endif
