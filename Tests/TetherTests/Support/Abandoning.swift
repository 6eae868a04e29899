import Synchronization

/// Waits for `operation` for at most `timeout` (real time) and returns nil after that, leaving an operation that
/// ignores cancellation running: unlike `withDeadline`, whose task group waits for every child, so that an
/// operation that cannot be cancelled (a task's `value`, a probe's continuation) would hang the test it guards.
/// A guard against a hung test, not a synchronisation: the operation normally ends long before.
func abandoning<Value: Sendable>(
    after timeout: Duration = .seconds(10), _ operation: @escaping @Sendable () async -> Value
) async -> Value? {
    let first = Mutex<CheckedContinuation<Value?, Never>?>(nil)
    return await withCheckedContinuation { (continuation: CheckedContinuation<Value?, Never>) in
        first.withLock { $0 = continuation }
        let finish: @Sendable (Value?) -> Void = { value in
            first.withLock { $0.take() }?.resume(returning: value)
        }
        let work = Task { finish(await operation()) }
        Task {
            try? await Task.sleep(for: timeout)
            work.cancel()
            finish(nil)
        }
    }
}
