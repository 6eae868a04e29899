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
        /// A connection opened at some point.
        var opened = false
        var ending = false
        /// Messages are printed: until the end is decided, or until the end of the close after the input's end.
        var printing = true
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
            if connection.phase == .open { state.opened = true }
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

    /// Whether a connection has opened since the command started.
    var hasOpened: Bool { self.state.withLock { $0.opened } }

    /// Whether received messages are still printed.
    var printsMessages: Bool { self.state.withLock { $0.printing } }

    /// The command is ending: every wait returns at once (nil, false), now and later.
    /// - Parameter printing: received messages are still printed (the replies that arrive during the close).
    func end(printing: Bool = false) {
        let (opened, settled) = self.state.withLock { state in
            state.ending = true
            state.printing = printing
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
