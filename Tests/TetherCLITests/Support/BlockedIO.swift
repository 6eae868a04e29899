#if os(Linux)
import Dispatch
import Synchronization
import TetherCLI
#if canImport(Glibc)
import Glibc
#endif

/// Command streams whose standard output blocks at its first write until `release()`, like a pipe that nobody
/// reads, and whose interrupt hook delivers SIGTERM as soon as a write is blocked.
final class BlockedIO: Sendable {
    private struct State {
        var blocked = false
        var released = false
        var blockedWaiter: CheckedContinuation<Bool, Never>?
        var interruptedAt: ContinuousClock.Instant?
        var error = ""
    }

    private let state = Mutex(State())
    private let gate = DispatchSemaphore(value: 0)

    var io: CommandIO {
        CommandIO(
            write: { _ in self.block() },
            writeError: { text in self.state.withLock { $0.error += text } },
            waitForInterrupt: {
                guard await self.waitUntilBlocked() else { return 0 }
                self.state.withLock { $0.interruptedAt = .now }
                return SIGTERM
            }
        )
    }

    /// When the interrupt hook returned SIGTERM.
    var interruptedAt: ContinuousClock.Instant? { self.state.withLock { $0.interruptedAt } }
    var error: String { self.state.withLock { $0.error } }

    /// Lets the blocked write (and every later one) return.
    func release() {
        let wasBlocked = self.state.withLock { state in
            state.released = true
            return state.blocked
        }
        if wasBlocked { self.gate.signal() }
    }

    private func block() {
        let waiter = self.state.withLock { state -> CheckedContinuation<Bool, Never>?? in
            guard !state.released, !state.blocked else { return nil }
            state.blocked = true
            defer { state.blockedWaiter = nil }
            return .some(state.blockedWaiter)
        }
        guard let waiter else { return }
        waiter?.resume(returning: true)
        self.gate.wait()
    }

    /// True once a write is blocked; false when the calling task is cancelled first.
    private func waitUntilBlocked() async -> Bool {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let now: Bool? = self.state.withLock { state in
                    if state.blocked { return true }
                    if Task.isCancelled { return false }
                    state.blockedWaiter = continuation
                    return nil
                }
                if let now { continuation.resume(returning: now) }
            }
        } onCancel: {
            let waiter = self.state.withLock { state in
                defer { state.blockedWaiter = nil }
                return state.blockedWaiter
            }
            waiter?.resume(returning: false)
        }
    }
}
#endif
