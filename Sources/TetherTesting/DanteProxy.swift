#if os(Linux)
import Foundation
import Synchronization
import TetherPOSIX

/// A real SOCKS5 proxy for the project's tests: Debian's `danted` (package dante-server), bound to 127.0.0.1 on a
/// free port with a configuration generated in a temporary directory, without authentication, allowing `CONNECT`
/// to loopback only. Ready once it logs that it is running (an explicit signal, not a delay); stopped by `stop()`.
package final class DanteProxy: Sendable {
    package static let executable: String? = ["/usr/sbin/danted", "/usr/bin/danted", "/usr/sbin/sockd"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    /// Why tests that need it skip, when it is missing.
    package static let missing = "danted is not installed (apt-get install dante-server; .ci/run installs it)"

    package let port: Int
    private let directory: String
    private let process: Process
    private let log: ProcessLog
    private let stopped = Atomic(false)

    package init() async throws {
        guard let executable = Self.executable else { throw TinyProxyError.missing }
        // As with tinyproxy: a port found free may be taken before the proxy binds it; a few tries.
        for _ in 0..<5 {
            if let started = try await Self.start(executable) {
                (self.port, self.directory, self.process, self.log) = started
                return
            }
        }
        throw TinyProxyError.didNotStart
    }

    private static func start(
        _ executable: String
    ) async throws -> (port: Int, directory: String, process: Process, log: ProcessLog)? {
        let probe = try TCPListener.bind(host: "127.0.0.1")
        let port = probe.port
        await probe.close()
        let directory = NSTemporaryDirectory() + "tether-danted-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let configuration = """
            logoutput: stderr
            internal: 127.0.0.1 port = \(port)
            external: 127.0.0.1
            clientmethod: none
            socksmethod: none
            user.privileged: root
            user.unprivileged: nobody
            client pass { from: 127.0.0.0/8 to: 0.0.0.0/0 }
            socks pass { from: 127.0.0.0/8 to: 127.0.0.0/8 command: connect }

            """
        let file = directory + "/danted.conf"
        try configuration.write(toFile: file, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["-f", file, "-p", directory + "/danted.pid", "-N", "1"]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let log = ProcessLog(reading: pipe.fileHandleForReading)
        guard await log.text(once: "running") != nil else {
            process.waitUntilExit()
            try? FileManager.default.removeItem(atPath: directory)
            return nil
        }
        return (port, directory, process, log)
    }

    /// `socks5h://127.0.0.1:PORT` (or `socks5://` when the client resolves).
    package func url(proxyResolvesNames: Bool = true) -> String {
        "\(proxyResolvesNames ? "socks5h" : "socks5")://127.0.0.1:\(self.port)"
    }

    /// Kills it and its worker processes (SIGKILL: it inherits the test process's blocked SIGTERM and would never
    /// see one), reaps it and removes its directory. Once: a second call does nothing.
    package func stop() {
        guard !self.stopped.exchange(true, ordering: .relaxed) else { return }
        let main = self.process.processIdentifier
        for worker in Self.children(of: main) { kill(worker, SIGKILL) }
        kill(main, SIGKILL)
        self.process.waitUntilExit()
        try? FileManager.default.removeItem(atPath: self.directory)
    }

    /// The processes whose parent is `parent`, from `/proc/PID/stat` (field 4).
    private static func children(of parent: Int32) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { entry -> Int32? in
            guard let pid = Int32(entry),
                let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { return nil }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.count > 1 && Int32(fields[1]) == parent ? pid : nil
        }
    }

    /// Everything it logged, once it has exited: call it after `stop()`.
    package func exitedLog() async -> String {
        await self.log.text(once: nil) ?? ""
    }
}
#endif
