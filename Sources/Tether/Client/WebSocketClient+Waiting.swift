/// Waiting for the session to open, from any number of tasks, without entering the actor.
extension WebSocketClient {
    /// Returns once the session is open (at once if it is), so that a `send` right after it finds the connection
    /// open — the greeting, if any, is out by then. Any number of tasks may wait at once.
    ///
    /// ```swift
    /// await client.start()
    /// try await client.waitUntilOpen(timeout: .seconds(10))
    /// try await client.send(text: "hello")
    /// ```
    ///
    /// It follows `states`: while the session connects, waits for a retry, is offline or suspended, it goes on
    /// waiting. The session can close again at any time, so a `send` after it can still throw `.notOpen`.
    ///
    /// - Parameter timeout: how long to wait, on the client's clock; nil (the default) waits until one of the other
    ///   outcomes, or the cancellation of the calling task.
    /// - Throws: `WebSocketOpenError.timedOut` when `timeout` passed first (the client goes on trying);
    ///   `.failed(reason)` when the session failed for good (not retried, or the retry policy gave up);
    ///   `.stopped` when the client is stopped (never started, or `stop()` was called meanwhile: call `start()`
    ///   first); `.cancelled` when the calling task is cancelled. None of them changes the client.
    public nonisolated func waitUntilOpen(timeout: Duration? = nil) async throws(WebSocketOpenError) {
        let states = self.states
        guard let timeout else {
            return try await Self.open(of: states).get()
        }
        let clock = self.clock
        let outcome = await withTaskGroup(of: Result<Void, WebSocketOpenError>?.self) { group in
            group.addTask { await Self.open(of: states) }
            group.addTask {
                do {
                    try await clock.sleep(for: timeout)
                } catch {
                    return nil  // cancelled: the other child reports why
                }
                return .failure(.timedOut)
            }
            var first: Result<Void, WebSocketOpenError> = .failure(.cancelled)
            while let next = await group.next() {
                guard let next else { continue }
                first = next
                break
            }
            group.cancelAll()
            return first
        }
        try outcome.get()
    }

    /// Follows `states` until the session is open (success), failed or stopped; `.cancelled` when the calling task
    /// is cancelled first.
    private nonisolated static func open(of states: WebSocketStates) async -> Result<Void, WebSocketOpenError> {
        for await state in states {
            switch state.phase {
            case .open: return .success(())
            case .failed: return .failure(state.failure.map { .failed($0) } ?? .stopped)
            case .stopped: return .failure(.stopped)
            case .connecting, .waiting, .offline, .suspended: continue
            }
        }
        return .failure(Task.isCancelled ? .cancelled : .stopped)  // cancelled, or the client is gone
    }
}
