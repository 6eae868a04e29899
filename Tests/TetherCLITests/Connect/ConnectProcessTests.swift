#if os(Linux)
import Foundation
import Synchronization
import Testing
import TetherTestServer
import TetherTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The built `tether` binary in a child process: real signals, and a real stdout pipe that nobody reads.
@Suite struct ConnectProcessTests {
    /// `tether` beside the test bundle, when the build made it (`swift build --build-tests` does).
    static let binary: URL? = {
        let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        let binary = bundle.deletingLastPathComponent().appendingPathComponent("tether")
        return FileManager.default.isExecutableFile(atPath: binary.path) ? binary : nil
    }()

    @Test(.enabled(if: Self.binary != nil, "needs the tether binary beside the tests"))
    func sigtermEndsAFloodedConnectWhoseStdoutNobodyReadsWithinOneSecond() async throws {
        guard let binary = Self.binary else { return }
        let server = try TestServer(scenario: .send(count: 300_000, size: 1))
        let process = Process()
        process.executableURL = binary
        process.arguments = ["connect", server.url(), "--no-stdin", "--no-path-monitor"]
        let stdout = Pipe()  // never read: once its 64 KiB are full, every write to it blocks
        let stderr = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        process.standardInput = FileHandle.nullDevice
        let status = ExitWatch()
        process.terminationHandler = { status.exited($0.terminationStatus, reason: $0.terminationReason) }
        try process.run()
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }  // only if the test failed
        // The status line says the connection is open: the flood is on its way to a stdout that is not read.
        let opened = await Self.line(containing: " open gen=1 ", in: stderr.fileHandleForReading)
        try #require(opened, "the child ended before it opened")
        let signalled = ContinuousClock.now
        kill(process.processIdentifier, SIGTERM)
        let exit = await status.wait()
        let elapsed = ContinuousClock.now - signalled
        await server.stop()
        #expect(exit.reason == .exit && exit.status == 0, "\(exit)")
        #expect(elapsed < TestTime.scaled(.seconds(1)), "\(elapsed)")  // scaled: the child is slowed too
        _ = stdout  // kept open (and unread) until the child has exited
    }

    /// Reads `handle` on a thread of its own until a line contains `text` (true) or the stream ends (false); then
    /// goes on reading to the end, so that the child never blocks on standard error.
    static func line(containing text: String, in handle: FileHandle) async -> Bool {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                var seen = ""
                var found = false
                while true {
                    let data = handle.availableData
                    if data.isEmpty { break }
                    guard !found else { continue }
                    seen += String(decoding: data, as: UTF8.self)
                    if seen.contains(text) {
                        found = true
                        continuation.resume(returning: true)
                    }
                }
                if !found { continuation.resume(returning: false) }
            }
        }
    }
}

/// The child's exit, handed from `Process`'s termination handler to the test.
final class ExitWatch: Sendable {
    struct Exit: Sendable {
        var status: Int32
        var reason: Process.TerminationReason
    }

    private let state = Mutex<(exit: Exit?, waiter: CheckedContinuation<Exit, Never>?)>((nil, nil))

    func exited(_ status: Int32, reason: Process.TerminationReason) {
        let exit = Exit(status: status, reason: reason)
        let waiter = self.state.withLock { state in
            state.exit = exit
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: exit)
    }

    func wait() async -> Exit {
        await withCheckedContinuation { continuation in
            let exit = self.state.withLock { state in
                if state.exit == nil { state.waiter = continuation }
                return state.exit
            }
            if let exit { continuation.resume(returning: exit) }
        }
    }
}
#endif
