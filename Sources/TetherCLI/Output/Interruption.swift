import Synchronization

/// The user's request to stop (SIGINT or SIGTERM) and the deadline it sets: a command's shutdown (closing its
/// connections, printing what is queued) gets `budget` from the signal, and the command returns then even if a
/// peer or a write to standard output never answers.
final class Interruption: Sendable {
    /// How long a shutdown may take after a signal: enough for a clean close over a working connection, and
    /// a quarter of the second promised to the user, which leaves room to exit on a loaded machine.
    static let defaultBudget: Duration = .milliseconds(250)

    private struct State {
        var deadline: ContinuousClock.Instant?
        var waiters: [UInt64: CheckedContinuation<ContinuousClock.Instant?, Never>] = [:]
        var nextWaiter: UInt64 = 0
    }

    private let state = Mutex(State())
    private let budget: Duration

    init(budget: Duration = Interruption.defaultBudget) {
        self.budget = budget
    }

    /// The signal arrived: the deadline is `budget` from now. Later calls change nothing.
    func interrupt() {
        let deadline = ContinuousClock.now + self.budget
        let waiters = self.state.withLock { state -> [CheckedContinuation<ContinuousClock.Instant?, Never>] in
            guard state.deadline == nil else { return [] }
            state.deadline = deadline
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume(returning: deadline) }
    }

    var isInterrupted: Bool { self.state.withLock { $0.deadline != nil } }

    /// Waits for `work` to end, or for the deadline once a signal has come, whichever is first.
    /// - Returns: true when `work` ended; false at the deadline (`work` goes on running).
    func wait(for work: Task<Void, Never>) async -> Bool {
        let first = FirstResult()
        Task {  // ends with `work`
            await work.value
            first.resolve(true)
        }
        let timer = Task {
            guard let deadline = await self.deadline() else { return }  // cancelled: the work ended first
            try? await Task.sleep(until: deadline, tolerance: .milliseconds(10), clock: .continuous)
            first.resolve(false)
        }
        let ended = await first.value()
        timer.cancel()
        return ended
    }

    /// The deadline, once a signal has come; nil when the calling task is cancelled first.
    private func deadline() async -> ContinuousClock.Instant? {
        let id = self.state.withLock { state in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let now: ContinuousClock.Instant?? = self.state.withLock { state in
                    if let deadline = state.deadline { return .some(deadline) }
                    if Task.isCancelled { return .some(nil) }
                    state.waiters[id] = continuation
                    return .none
                }
                if let now { continuation.resume(returning: now) }
            }
        } onCancel: {
            let waiter = self.state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.resume(returning: nil)
        }
    }
}

/// The first of two answers; the later one is ignored.
private final class FirstResult: Sendable {
    private let state = Mutex<(value: Bool?, waiter: CheckedContinuation<Bool, Never>?)>((nil, nil))

    func resolve(_ value: Bool) {
        let waiter = self.state.withLock { state -> CheckedContinuation<Bool, Never>? in
            guard state.value == nil else { return nil }
            state.value = value
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: value)
    }

    func value() async -> Bool {
        await withCheckedContinuation { continuation in
            let value = self.state.withLock { state -> Bool? in
                if let value = state.value { return value }
                state.waiter = continuation
                return nil
            }
            if let value { continuation.resume(returning: value) }
        }
    }
}
