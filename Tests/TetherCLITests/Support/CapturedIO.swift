import Synchronization
import TetherCLI

/// Command streams captured in memory, with stdin lines fed by the test.
final class CapturedIO: Sendable {
    private struct Waiter {
        var text: String
        var continuation: CheckedContinuation<Void, Never>
    }

    private struct State {
        var output = ""
        var error = ""
        var errorWaiters: [Waiter] = []
    }

    private let state = Mutex(State())
    let input: AsyncStream<String>
    private let inputSink: AsyncStream<String>.Continuation

    init() {
        (self.input, self.inputSink) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .unbounded)
    }

    deinit {
        self.inputSink.finish()
    }

    var io: CommandIO {
        CommandIO(
            write: { text in self.state.withLock { $0.output += text } },
            writeError: { text in self.wroteError(text) },
            inputLines: { self.input }
        )
    }

    var output: String { self.state.withLock { $0.output } }
    var error: String { self.state.withLock { $0.error } }
    var outputLines: [String] { self.output.split(separator: "\n").map(String.init) }

    /// Types a line on stdin.
    func type(_ line: String) {
        self.inputSink.yield(line)
    }

    /// Ends stdin.
    func endInput() {
        self.inputSink.finish()
    }

    /// Returns once stderr holds `text` (at once if it does): the command's own output is the signal.
    func waitForError(containing text: String) async {
        await withCheckedContinuation { continuation in
            let found = self.state.withLock { state in
                if state.error.contains(text) { return true }
                state.errorWaiters.append(Waiter(text: text, continuation: continuation))
                return false
            }
            if found { continuation.resume() }
        }
    }

    private func wroteError(_ text: String) {
        let ready = self.state.withLock { state in
            state.error += text
            var ready: [CheckedContinuation<Void, Never>] = []
            state.errorWaiters.removeAll { waiter in
                guard state.error.contains(waiter.text) else { return false }
                ready.append(waiter.continuation)
                return true
            }
            return ready
        }
        for continuation in ready { continuation.resume() }
    }
}
