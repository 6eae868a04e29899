/// Runs `operation`, giving up after `timeout`: a guard that turns a missing signal into nil instead of a hung
/// test run. Not a synchronisation sleep: the operation waits on its own signal and normally finishes long before
/// the deadline. Real time, whatever clock the client runs on. Package-wide, so the project's own test targets use
/// this one too.
package func withDeadline<Value: Sendable>(
    _ timeout: Duration = .seconds(10), _ operation: @escaping @Sendable () async -> Value?
) async -> Value? {
    await withTaskGroup(of: Value?.self) { group in
        group.addTask { await operation() }
        group.addTask {
            try? await Task.sleep(for: timeout)
            return nil
        }
        let first = await group.next() ?? nil
        group.cancelAll()
        return first
    }
}
