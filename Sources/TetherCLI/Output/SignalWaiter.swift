import Dispatch
import Synchronization
import Glibc

/// Waits for the first of some signals with Dispatch signal sources. While it waits the signals' default action
/// (terminating the process) is off, so that a command can close its connections cleanly; it is restored after.
enum SignalWaiter {
    /// Hands the first signal (or 0 for a cancellation) to the waiter, whether it comes before or after the wait.
    private final class Once: Sendable {
        private struct State {
            var waiter: CheckedContinuation<Int32, Never>?
            var signal: Int32?
        }

        private let state = Mutex(State())

        func fire(_ number: Int32) {
            let waiter = self.state.withLock { state -> CheckedContinuation<Int32, Never>? in
                guard state.signal == nil else { return nil }
                state.signal = number
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(returning: number)
        }

        func wait() async -> Int32 {
            await withCheckedContinuation { continuation in
                let early = self.state.withLock { state -> Int32? in
                    if let signal = state.signal { return signal }
                    state.waiter = continuation
                    return nil
                }
                if let early { continuation.resume(returning: early) }
            }
        }
    }

    /// - Returns: the signal that arrived, or 0 when the calling task was cancelled.
    static func wait(for signals: [Int32]) async -> Int32 {
        let queue = DispatchQueue(label: "tether.signals")
        let once = Once()
        var sources: [any DispatchSourceSignal] = []
        for number in signals {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { once.fire(number) }
            source.resume()
            sources.append(source)
        }
        let number = await withTaskCancellationHandler {
            await once.wait()
        } onCancel: {
            once.fire(0)
        }
        for source in sources { source.cancel() }
        for number in signals { signal(number, SIG_DFL) }
        return number
    }
}
