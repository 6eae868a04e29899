import Synchronization
import Tether
import TetherCore

/// The session as `tether connect` last saw it in the client's events: what the stdin reader waits for (an open
/// connection, the end of a connection attempt) and what decides the exit status (a failure).
final class SessionWatch: Sendable {
    /// The session failed for a non-retryable reason.
    struct Failure: Sendable, Equatable {
        var reason: CloseReason?
    }

    private struct OpenWaiter {
        var after: Int
        var continuation: CheckedContinuation<Int?, Never>
    }

    private struct State {
        /// Nil until the first state change: the client is starting, which counts as connecting.
        var phase: SessionPhase?
        var generation = 0
        var failure: Failure?
        var ending = false
        var openWaiters: [OpenWaiter] = []
        var settleWaiters: [CheckedContinuation<Bool, Never>] = []

        var isSettled: Bool { self.phase != nil && self.phase != .connecting }
    }

    private let state = Mutex(State())

    /// A state change from the client's events.
    func update(_ connection: ConnectionState) {
        let (opened, settled) = self.state.withLock { state in
            state.phase = connection.phase
            state.generation = connection.generation
            if connection.phase == .failed { state.failure = Failure(reason: connection.failure) }
            var opened: [CheckedContinuation<Int?, Never>] = []
            if connection.phase == .open {
                state.openWaiters.removeAll { waiter in
                    guard connection.generation > waiter.after else { return false }
                    opened.append(waiter.continuation)
                    return true
                }
            }
            var settled: [CheckedContinuation<Bool, Never>] = []
            if state.isSettled { swap(&settled, &state.settleWaiters) }
            return (opened, settled)
        }
        for waiter in opened { waiter.resume(returning: connection.generation) }
        for waiter in settled { waiter.resume(returning: true) }
    }

    /// The session's failure, once a state change reported one.
    var failure: Failure? { self.state.withLock { $0.failure } }

    /// The command is ending: `end()` was called.
    var isEnding: Bool { self.state.withLock { $0.ending } }

    /// The command is ending: every wait returns at once (nil, false), now and later.
    func end() {
        let (opened, settled) = self.state.withLock { state in
            state.ending = true
            defer {
                state.openWaiters.removeAll()
                state.settleWaiters.removeAll()
            }
            return (state.openWaiters.map(\.continuation), state.settleWaiters)
        }
        for waiter in opened { waiter.resume(returning: nil) }
        for waiter in settled { waiter.resume(returning: false) }
    }

    /// Waits until a connection newer than generation `after` is open (0: any).
    /// - Returns: its generation; nil when the command ends first.
    func waitUntilOpen(after generation: Int) async -> Int? {
        await withCheckedContinuation { continuation in
            let now: Int?? = self.state.withLock { state in
                if state.ending { return .some(nil) }
                if state.phase == .open, state.generation > generation { return .some(state.generation) }
                state.openWaiters.append(OpenWaiter(after: generation, continuation: continuation))
                return .none
            }
            if let now { continuation.resume(returning: now) }
        }
    }

    /// Waits until no connection attempt is in progress: the connection opened, or the attempt failed (the
    /// session waits to retry, is offline or failed).
    /// - Returns: true then; false when the command ends first.
    func waitUntilSettled() async -> Bool {
        await withCheckedContinuation { continuation in
            let now: Bool? = self.state.withLock { state in
                if state.ending { return false }
                if state.isSettled { return true }
                state.settleWaiters.append(continuation)
                return nil
            }
            if let now { continuation.resume(returning: now) }
        }
    }
}
