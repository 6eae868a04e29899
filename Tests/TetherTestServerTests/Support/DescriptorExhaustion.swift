#if os(Linux)
import Glibc
import Synchronization

/// An accept gate for `TestServer.setAcceptGate`: refuses accept attempts with `EMFILE`, as if the
/// process were out of descriptors, while told to, and reports each refusal with its time. The whole
/// test process keeps its real limit.
final class DescriptorExhaustion: Sendable {
    private struct State {
        var refuseNext = 0
        var refuseAll = false
        var refused = 0
    }

    private let state = Mutex(State())
    /// The time of each refused attempt, in order.
    let refusals: AsyncStream<ContinuousClock.Instant>
    private let continuation: AsyncStream<ContinuousClock.Instant>.Continuation

    init() {
        (self.refusals, self.continuation) = AsyncStream.makeStream(of: ContinuousClock.Instant.self)
    }

    /// Refuses the next `count` attempts.
    func refuse(next count: Int) {
        self.state.withLock { $0.refuseNext = count }
    }

    /// Refuses every attempt while `refusing` is true.
    func refuseAll(_ refusing: Bool) {
        self.state.withLock { $0.refuseAll = refusing }
    }

    /// Attempts refused so far.
    var refusedCount: Int { self.state.withLock { $0.refused } }

    /// The gate: called on the server's loop before each accept attempt.
    func gate() -> Int32? {
        let refused = self.state.withLock { state in
            guard state.refuseAll || state.refuseNext > 0 else { return false }
            state.refuseNext = max(0, state.refuseNext - 1)
            state.refused += 1
            return true
        }
        guard refused else { return nil }
        self.continuation.yield(.now)
        return EMFILE
    }
}
#endif
