import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The lines a user types at `tether connect` on a terminal, read key by key on a thread of its own
/// (`LineEditing`), with the line being typed shown below the status line (`StatusLine.inputChanged`): received
/// messages and status changes are drawn above it and never overwrite it.
///
/// Bounded like `LineReader`: at most one submitted line waits for the command; while it waits, the thread stops
/// reading (keys wait in the terminal), and a line holds at most `LineEditing.limit` bytes.
final class TerminalInput: Sendable {
    private struct State {
        /// Submitted lines not taken yet (one at most while the thread reads).
        var lines: [String] = []
        var ended = false
        var waiter: CheckedContinuation<String?, Never>?
    }

    private let state = Mutex(State())
    /// Signalled when the command takes a line: the thread may read again.
    private let taken = DispatchSemaphore(value: 0)

    /// Starts reading `descriptor` (already in non-canonical mode, see `TerminalMode`) until Ctrl-D on an empty
    /// line, the end of input or an error.
    init(descriptor: Int32, status: StatusLine) {
        let thread = Thread { [self] in self.serve(descriptor: descriptor, status: status) }
        thread.name = "tether-keys"
        thread.start()
    }

    /// The submitted lines, taken one at a time; the stream ends at Ctrl-D or the end of input.
    func lines() -> AsyncStream<String> {
        AsyncStream(unfolding: { await self.next() }, onCancel: { [self] in self.end() })
    }

    /// The next submitted line; nil at the end of input or when the calling task is cancelled.
    func next() async -> String? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<String?, Never>) in
                let now: String?? = self.state.withLock { state in
                    if !state.lines.isEmpty { return .some(state.lines.removeFirst()) }
                    if state.ended || Task.isCancelled { return .some(nil) }
                    state.waiter = continuation
                    return .none
                }
                if let now {
                    if now != nil { self.taken.signal() }
                    continuation.resume(returning: now)
                }
            }
        } onCancel: {
            let waiter = self.state.withLock { state in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(returning: nil)
        }
    }

    /// No more lines are wanted.
    func end() {
        let waiter = self.state.withLock { state in
            state.ended = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: nil)
        self.taken.signal()  // a thread waiting for its line to be taken goes on (and finds the end)
    }

    private func serve(descriptor: Int32, status: StatusLine) {
        var editing = LineEditing()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            if count <= 0 { break }
            for event in editing.feed(buffer[..<count]) {
                switch event {
                case .changed(let text):
                    status.inputChanged(text)
                case .submitted(let line):
                    status.inputSubmitted(line)
                    guard self.hand(line) else { return }
                case .ended:
                    break
                }
            }
            if editing.hasEnded || self.state.withLock({ $0.ended }) { break }
        }
        let waiter = self.state.withLock { state in
            state.ended = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: nil)
    }

    /// Gives `line` to the command, then waits until it is taken.
    /// - Returns: false when no more lines are wanted.
    private func hand(_ line: String) -> Bool {
        let waiter: CheckedContinuation<String?, Never>? = self.state.withLock { state in
            if state.ended { return nil }
            guard let waiter = state.waiter else {
                state.lines.append(line)
                return nil
            }
            state.waiter = nil
            return waiter
        }
        if let waiter {
            waiter.resume(returning: line)
            return true
        }
        self.taken.wait()
        return !self.state.withLock { $0.ended }
    }
}
