#if os(Linux)
import Foundation
import Synchronization
import TetherTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A real terminal for a test: a tmux server of its own (a unique socket name; `stop()` kills it), one window of a
/// fixed size running a command, what the command writes streamed to the test as it comes, and the screen as tmux
/// renders it. `.ci/run` installs tmux; a test that needs it is skipped, saying so, where it is missing.
///
/// The command runs in `sh`, which prints `[exit STATUS tty same]` after it (`tty changed` when the command left the
/// terminal's settings other than it found them) and keeps the window open.
final class Tmux: Sendable {
    /// tmux's path, when it is installed.
    static let executable: String? = ["/usr/bin/tmux", "/usr/local/bin/tmux", "/bin/tmux"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }
    static let missing = "needs tmux (Debian's tmux package; .ci/run installs it) and the tether binary"

    private let socket = "tether-test-\(UUID().uuidString.prefix(8))"
    private let fifo: String
    private let stream = Mutex<(text: String, waiters: [Waiter], ended: Bool)>(("", [], false))

    private struct Waiter {
        var id: UInt64
        var text: String
        var after: Int
        var continuation: CheckedContinuation<Bool, Never>
    }

    /// Starts `command` (a shell command line) in a new window of `columns` × `rows`, with everything it writes
    /// streamed to `waitFor(_:)` from its first byte.
    init(_ command: String, columns: Int = 100, rows: Int = 12) throws {
        self.fifo = FileManager.default.temporaryDirectory.appendingPathComponent("\(self.socket).fifo").path
        guard mkfifo(self.fifo, 0o600) == 0 else { throw TmuxError(message: "mkfifo failed: \(errno)") }
        // The command waits for a signal from the test, given once its output is piped, so nothing is missed; it
        // stays on the screen after it exits (`; exec sleep`), with its exit status.
        let script = "\(Self.executable ?? "tmux") -L \(self.socket) wait-for go; before=$(stty -g); \(command); "
            + "status=$?; if [ \"$(stty -g)\" = \"$before\" ]; then tty=same; else tty=changed; fi; "
            + "echo \"[exit $status tty $tty]\"; exec sleep 600"
        try self.run([
            "-f", "/dev/null", "new-session", "-d", "-s", "test", "-x", "\(columns)", "-y", "\(rows)", script,
        ])
        let fifo = self.fifo
        Thread.detachNewThread { [self] in
            guard let handle = FileHandle(forReadingAtPath: fifo) else { return self.ended() }
            while true {
                let data = handle.availableData
                if data.isEmpty { break }
                self.received(String(decoding: data, as: UTF8.self))
            }
            self.ended()
        }
        try self.run(["pipe-pane", "-t", "test", "cat > \(fifo)"])
        try self.run(["wait-for", "-S", "go"])
    }

    /// Ends the window and the tmux server.
    func stop() {
        _ = try? self.run(["kill-server"])
        unlink(self.fifo)
    }

    /// Waits until what the command wrote from `offset` on (see `written`) contains `text`, escape sequences
    /// included as written.
    /// - Returns: false when the window's output ended first, or after 10 s without it (a test that fails, not one
    ///   that hangs).
    func waitFor(_ text: String, after offset: Int = 0) async -> Bool {
        let id = UInt64.random(in: 0...UInt64.max)
        let deadline = Task {
            try? await Task.sleep(for: TestTime.scaled(.seconds(10)))  // a guard: longer in a slowed process
            self.resume(id, with: false)
        }
        defer { deadline.cancel() }
        return await withCheckedContinuation { continuation in
            let now: Bool? = self.stream.withLock { stream in
                if Self.contains(stream.text, text, after: offset) { return true }
                if stream.ended { return false }
                stream.waiters.append(Waiter(id: id, text: text, after: offset, continuation: continuation))
                return nil
            }
            if let now { continuation.resume(returning: now) }
        }
    }

    private func resume(_ id: UInt64, with result: Bool) {
        let waiter = self.stream.withLock { stream in
            stream.waiters.firstIndex { $0.id == id }.map { stream.waiters.remove(at: $0) }
        }
        waiter?.continuation.resume(returning: result)
    }

    private static func contains(_ written: String, _ text: String, after offset: Int) -> Bool {
        let utf8 = written.utf8
        guard offset <= utf8.count else { return false }
        return String(decoding: utf8.dropFirst(offset), as: UTF8.self).contains(text)
    }

    /// How many bytes the command wrote so far: an offset for `waitFor(_:after:)`.
    var writtenCount: Int { self.stream.withLock { $0.text.utf8.count } }

    /// Everything the command wrote so far.
    var written: String { self.stream.withLock { $0.text } }

    /// The screen as tmux shows it: one string per row, trailing spaces dropped, empty rows at the end dropped.
    func screen() throws -> [String] {
        let captured = try self.run(["capture-pane", "-p", "-t", "test"])
        var rows = captured.split(separator: "\n", omittingEmptySubsequences: false)
            .map { String($0.reversed().drop { $0 == " " }.reversed()) }
        while rows.last == "" { rows.removeLast() }
        return rows
    }

    /// Types `text` as keys.
    func type(_ text: String) throws {
        try self.run(["send-keys", "-t", "test", "-l", text])
    }

    /// Presses keys by tmux's names (`Enter`, `C-c`, `C-d`).
    func press(_ keys: String...) throws {
        try self.run(["send-keys", "-t", "test"] + keys)
    }

    /// Runs a tmux command and returns what it printed.
    ///
    /// Not with `Process`: the client of `new-session` starts the server, which inherits the client's descriptors,
    /// and `Process` learns of an exit through a descriptor its child inherits (so it never would), while the test
    /// process's own sockets (other tests' servers) would stay open in the server. The client is spawned through
    /// `bash`, which closes every descriptor above 2 first, and waited for with `waitpid`.
    @discardableResult
    private func run(_ arguments: [String]) throws -> String {
        guard let executable = Self.executable else { throw TmuxError(message: Self.missing) }
        var output: [Int32] = [0, 0]
        guard pipe(&output) == 0 else { throw TmuxError(message: "pipe failed: \(errno)") }
        defer { close(output[0]) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, output[1], 1)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let closing = #"for fd in /proc/$$/fd/*; do fd=${fd##*/}; [ "$fd" -gt 2 ] && eval "exec $fd>&-"; done "#
            + #"2>/dev/null; exec "$@""#
        let command = ["/bin/bash", "-c", closing, "tmux", executable, "-L", self.socket] + arguments
        let argv = command.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        // The test's thread blocks most signals, and a child inherits that mask: tmux's window processes would then
        // ignore the SIGHUP that ends them (and the tether binary a Ctrl-C). The child starts with none blocked.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGPIPE, SIGCHLD, SIGTSTP, SIGTTIN, SIGTTOU] {
            sigaddset(&defaults, signal)
        }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, "/bin/bash", &actions, &attributes, argv, environ)
        close(output[1])
        guard spawned == 0 else { throw TmuxError(message: "posix_spawn failed: \(spawned)") }
        var printed: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(output[0], $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            if count <= 0 { break }
            printed += chunk[..<count]
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        guard status == 0 else { throw TmuxError(message: "tmux \(arguments.first ?? "") failed: status \(status)") }
        return String(decoding: printed, as: UTF8.self)
    }

    private func received(_ text: String) {
        let ready = self.stream.withLock { stream in
            stream.text += text
            var ready: [CheckedContinuation<Bool, Never>] = []
            stream.waiters.removeAll { waiter in
                guard Self.contains(stream.text, waiter.text, after: waiter.after) else { return false }
                ready.append(waiter.continuation)
                return true
            }
            return ready
        }
        for waiter in ready { waiter.resume(returning: true) }
    }

    private func ended() {
        let waiters = self.stream.withLock { stream in
            stream.ended = true
            defer { stream.waiters.removeAll() }
            return stream.waiters.map(\.continuation)
        }
        for waiter in waiters { waiter.resume(returning: false) }
    }
}

struct TmuxError: Error, CustomStringConvertible {
    var message: String
    var description: String { self.message }
}
#endif
