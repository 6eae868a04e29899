import Synchronization
import TetherCLI

/// Command streams captured in memory, with stdin lines fed by the test.
final class CapturedIO: Sendable {
    private struct State {
        var output = ""
        var error = ""
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
            writeError: { text in self.state.withLock { $0.error += text } },
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
}
