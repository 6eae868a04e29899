import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a command writes and reads. `standard` is the process's stdio; tests inject their own sinks.
public struct CommandIO: Sendable {
    /// Writes text (with its own newlines) to standard output.
    public var write: @Sendable (String) -> Void
    /// Writes text to standard error.
    public var writeError: @Sendable (String) -> Void
    /// Standard output is a terminal: progress is redrawn in place (a spinner) instead of printed as lines.
    public var outputIsTerminal: Bool
    /// Standard error is a terminal: `connect` redraws its status line in place.
    public var errorIsTerminal: Bool
    /// Lines typed on standard input (without their newline); finishes at end of input. Called once.
    public var inputLines: @Sendable () -> AsyncStream<String>
    /// Returns the number of the interrupting signal (SIGINT or SIGTERM) once the user asks the command to stop,
    /// or 0 when the waiting task is cancelled. Nil: nothing interrupts (tests stop commands their own way).
    public var waitForInterrupt: (@Sendable () async -> Int32)?

    public init(
        write: @escaping @Sendable (String) -> Void,
        writeError: @escaping @Sendable (String) -> Void,
        outputIsTerminal: Bool = false,
        errorIsTerminal: Bool = false,
        inputLines: @escaping @Sendable () -> AsyncStream<String> = { AsyncStream { $0.finish() } },
        waitForInterrupt: (@Sendable () async -> Int32)? = nil
    ) {
        self.write = write
        self.writeError = writeError
        self.outputIsTerminal = outputIsTerminal
        self.errorIsTerminal = errorIsTerminal
        self.inputLines = inputLines
        self.waitForInterrupt = waitForInterrupt
    }

    /// The process's standard streams. Standard input is read by a dedicated thread, so that a blocking
    /// `read` never holds up the client.
    public static var standard: CommandIO {
        CommandIO(
            write: { writeAll(1, $0) },
            writeError: { writeAll(2, $0) },
            outputIsTerminal: isatty(1) == 1,
            errorIsTerminal: isatty(2) == 1,
            inputLines: {
                let (lines, sink) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .unbounded)
                let reader = Thread {
                    while let line = readLine(strippingNewline: true) {
                        sink.yield(line)
                    }
                    sink.finish()
                }
                reader.name = "tether-stdin"
                reader.start()
                return lines
            },
            waitForInterrupt: { await SignalWaiter.wait(for: [SIGINT, SIGTERM]) }
        )
    }
}

/// Writes every byte of `text` to `descriptor`, retrying short writes and interrupts.
private func writeAll(_ descriptor: Int32, _ text: String) {
    var bytes = Array(text.utf8)
    var offset = 0
    while offset < bytes.count {
        let written = bytes.withUnsafeMutableBytes { buffer in
            write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
        }
        if written < 0 {
            if errno == EINTR { continue }
            return  // a closed pipe: nothing more can be shown
        }
        offset += written
    }
}
