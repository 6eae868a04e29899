import Foundation
import Glibc

/// Where a command writes and reads. `standard` is the process's stdio; tests inject their own sinks.
package struct CommandIO: Sendable {
    /// Writes text (with its own newlines) to standard output. It may block for as long as the reader of standard
    /// output does not read: `connect` and `serve` call it from an output thread of their own (`OutputQueue`),
    /// never from a task that a signal has to get through.
    package var write: @Sendable (String) -> Void
    /// Writes text to standard error. It may block like `write`.
    package var writeError: @Sendable (String) -> Void
    /// Standard output is a terminal: progress is redrawn in place (a spinner) instead of printed as lines.
    package var outputIsTerminal: Bool
    /// Standard error is a terminal: `connect` redraws its status line in place.
    package var errorIsTerminal: Bool
    /// Lines typed on standard input (without their newline); finishes at end of input. Called once. A command
    /// takes the next line only when it can use it, so a stream that produces lines on demand (like `standard`'s,
    /// `AsyncStream(unfolding:)`) reads no further ahead than its consumer.
    package var inputLines: @Sendable () -> AsyncStream<String>
    /// Returns the number of the interrupting signal (SIGINT or SIGTERM) once the user asks the command to stop,
    /// or 0 when the waiting task is cancelled. Nil: nothing interrupts (tests stop commands their own way).
    package var waitForInterrupt: (@Sendable () async -> Int32)?
    /// The environment variables a command reads (`connect --key-passphrase-env`): the process's by default.
    package var environment: [String: String] = ProcessInfo.processInfo.environment
    /// A terminal the user types on (standard input when it is one): `connect` reads it key by key and draws the
    /// line being typed itself when standard error is a terminal too. Nil: lines come from `inputLines`.
    package var keyboard: Int32?
    /// The width of the terminal standard error shows, in columns (asked at each redraw).
    package var columns: @Sendable () -> Int = { 80 }

    package init(
        write: @escaping @Sendable (String) -> Void,
        writeError: @escaping @Sendable (String) -> Void,
        outputIsTerminal: Bool = false,
        errorIsTerminal: Bool = false,
        inputLines: @escaping @Sendable () -> AsyncStream<String> = { AsyncStream { $0.finish() } },
        waitForInterrupt: (@Sendable () async -> Int32)? = nil,
        keyboard: Int32? = nil,
        columns: @escaping @Sendable () -> Int = { 80 }
    ) {
        self.write = write
        self.writeError = writeError
        self.outputIsTerminal = outputIsTerminal
        self.errorIsTerminal = errorIsTerminal
        self.inputLines = inputLines
        self.waitForInterrupt = waitForInterrupt
        self.keyboard = keyboard
        self.columns = columns
    }

    /// The process's standard streams. Standard input is read by a dedicated thread, so that a blocking
    /// `read` never holds up the client, one line per request (`LineReader`): input that comes faster than it is
    /// sent waits in the pipe, not in memory.
    package static var standard: CommandIO {
        CommandIO(
            write: { writeAll(1, $0) },
            writeError: { writeAll(2, $0) },
            outputIsTerminal: isatty(1) == 1,
            errorIsTerminal: isatty(2) == 1,
            inputLines: { LineReader(descriptor: 0).lines() },
            waitForInterrupt: { await SignalWaiter.wait(for: [SIGINT, SIGTERM]) },
            keyboard: isatty(0) == 1 ? 0 : nil,
            columns: { TerminalMode.columns(of: 2) }
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
