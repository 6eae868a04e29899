#if os(Linux)
import Synchronization

/// How a write's outcome reaches its writer: what the write entry points of a `ByteStream` differ in. Plain TCP and
/// TLS take every write through one `startWrite(_:array:sealing:delivery:)` with one of these.
package enum WriteDelivery: Sendable {
    /// By this completion (success or failure), if any.
    case completion(TCPConnection.WriteCompletion?)
    /// Failures only, so that a write the kernel takes at once costs no loop turn.
    case failuresOnly(@Sendable (SocketError) -> Void)
    /// By the `StartedSend` returned, which an async `send` awaits.
    case awaited

    /// The completion to keep with a write that waits (in a queue, or for a TLS handshake), and for an awaited
    /// write the waiter it finishes.
    func completionForWaiting() -> (TCPConnection.WriteCompletion?, WriteWaiter?) {
        switch self {
        case .completion(let completion):
            return (completion, nil)
        case .failuresOnly(let onFailure):
            return ({ result in if case .failure(let error) = result { onFailure(error) } }, nil)
        case .awaited:
            let waiter = WriteWaiter()
            return ({ waiter.finish($0) }, waiter)
        }
    }

    /// The write was handed to the kernel at once: a completion hears it on a later loop turn.
    func succeeded(on loop: EventLoop) -> StartedSend {
        if case .completion(let completion) = self { loop.completeLater(completion, with: .success(())) }
        return .done
    }

    /// The write failed (or was refused, `.closed`) at once: its writer hears it on a later loop turn, or from the
    /// returned value when awaited.
    func failed(_ error: SocketError, on loop: EventLoop) -> StartedSend {
        switch self {
        case .completion(let completion):
            loop.completeLater(completion, with: .failure(error))
        case .failuresOnly(let onFailure):
            loop.completeLater({ _ in onFailure(error) }, with: .failure(error))
        case .awaited:
            break
        }
        return .failed(error)
    }
}

/// A write begun with `ByteStream.startWrite`: done, refused or failed, or waiting for the kernel.
package enum StartedSend: Sendable {
    case done
    case failed(SocketError)
    case waiting(WriteWaiter)

    /// Returns once the bytes were all handed to the kernel. On the caller's executor (no hop when it was done at
    /// once, the common case).
    /// - Throws: the error that stopped the write.
    nonisolated(nonsending) package func finish() async throws(SocketError) {
        switch self {
        case .done: return
        case .failed(let error): throw error
        case .waiting(let waiter): try await waiter.result().get()
        }
    }
}

/// Where an awaited write waits when the kernel did not take it at once (or a TLS handshake holds it).
package final class WriteWaiter: Sendable {
    private enum State {
        case waiting(CheckedContinuation<Result<Void, SocketError>, Never>?)
        case finished(Result<Void, SocketError>)
    }

    private let state = Mutex(State.waiting(nil))

    init() {}

    func finish(_ result: Result<Void, SocketError>) {
        let continuation = self.state.withLock { state -> CheckedContinuation<Result<Void, SocketError>, Never>? in
            guard case .waiting(let continuation) = state else { return nil }
            state = .finished(result)
            return continuation
        }
        continuation?.resume(returning: result)
    }

    nonisolated(nonsending) func result() async -> Result<Void, SocketError> {
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

/// The write entry points of every byte stream, each one `startWrite` with its delivery.
extension ByteStream {
    /// Writes `bytes`: at once on the calling thread as far as the kernel takes them, the rest queued (for plain TCP
    /// the array itself, no copy) and flushed by the loop.
    /// - Parameters:
    ///   - sealing: this is the last write the stream accepts (a protocol's closing frame): later writes fail
    ///     `.closed`, atomically with this one, while reading goes on.
    ///   - completion: called on the loop thread with `.success` once all of `bytes` has been handed to the kernel,
    ///     or with the error that stopped it (`.closed` after the end). Never called from inside this call.
    package func write(_ bytes: [UInt8], sealing: Bool = false, completion: TCPConnection.WriteCompletion? = nil) {
        bytes.withUnsafeBytes { raw in
            _ = self.startWrite(raw, array: bytes, sealing: sealing, delivery: .completion(completion))
        }
    }

    /// Writes borrowed bytes without an intermediate array: only what waits is copied.
    /// - Parameters: as in `write(_:sealing:completion:)`.
    package func write(
        borrowing bytes: UnsafeRawBufferPointer, sealing: Bool = false,
        completion: TCPConnection.WriteCompletion? = nil
    ) {
        _ = self.startWrite(bytes, array: nil, sealing: sealing, delivery: .completion(completion))
    }

    /// Writes `bytes` like `write(_:sealing:completion:)` but reports only a failure, so that a write the kernel
    /// takes at once costs no loop turn.
    /// - Parameter onFailure: called on the loop thread with the error when the write is refused (`.closed`) or
    ///   fails, now or while queued. Never called from inside this call.
    package func write(_ bytes: [UInt8], onFailure: @escaping @Sendable (SocketError) -> Void) {
        bytes.withUnsafeBytes { raw in
            _ = self.startWrite(raw, array: bytes, sealing: false, delivery: .failuresOnly(onFailure))
        }
    }

    /// Sends `bytes` and returns once they were all handed to the kernel. When nothing is queued and the kernel takes
    /// them at once, this returns without leaving the calling thread.
    /// - Parameter sealing: as in `write(_:sealing:completion:)`.
    /// - Throws: the `SocketError` that stopped the write (`.closed` once writes are no longer accepted).
    package func send(_ bytes: [UInt8], sealing: Bool = false) async throws(SocketError) {
        let started = bytes.withUnsafeBytes { raw in
            self.startWrite(raw, array: bytes, sealing: sealing, delivery: .awaited)
        }
        try await started.finish()
    }
}

extension EventLoop {
    /// Calls `completion` on a later loop turn (at once if the loop has shut down).
    func completeLater(_ completion: TCPConnection.WriteCompletion?, with result: Result<Void, SocketError>) {
        guard let completion else { return }
        if !self.execute({ completion(result) }) { completion(result) }
    }

    /// Runs `body` now when called on the loop's thread, else on the loop after what is queued.
    func runOnLoop(_ body: @escaping @Sendable () -> Void) {
        if self.inEventLoop {
            body()
        } else {
            self.execute(body)
        }
    }
}
#endif
