#if os(Linux)
import Foundation
import Synchronization
import TetherPOSIX

/// A real HTTP proxy for the project's tests: Debian's `tinyproxy`, bound to 127.0.0.1 on a free port with a
/// configuration generated in a temporary directory, run in the foreground and stopped by `stop()`. Ready once it
/// logs that it accepts connections (an explicit signal, not a delay). Package-wide, so that the client's and the
/// `tether` command's test targets start it the same way.
package final class TinyProxy: Sendable {
    package static let executable: String? = ["/usr/bin/tinyproxy", "/usr/sbin/tinyproxy"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    /// Why tests that need it skip, when it is missing.
    package static let missing = "tinyproxy is not installed (apt-get install tinyproxy; .ci/run installs it)"

    package let port: Int
    private let directory: String
    private let process: Process
    private let log: ProcessLog
    private let stopped = Atomic(false)

    /// - Parameters:
    ///   - basicAuth: the one user and password the proxy accepts (others get 407, or 401 for a wrong password).
    ///   - allow: the client address allowed (others get 403).
    package init(basicAuth: (user: String, password: String)? = nil, allow: String = "127.0.0.1") async throws {
        guard let executable = Self.executable else { throw TinyProxyError.missing }
        // The port is found free, then released for the proxy: a test running beside this one may take it first, and
        // then the proxy cannot listen and exits. A few tries, each with a new port.
        for _ in 0..<5 {
            if let started = try await Self.start(executable, basicAuth: basicAuth, allow: allow) {
                (self.port, self.directory, self.process, self.log) = started
                return
            }
        }
        throw TinyProxyError.didNotStart
    }

    private static func start(
        _ executable: String, basicAuth: (user: String, password: String)?, allow: String
    ) async throws -> (port: Int, directory: String, process: Process, log: ProcessLog)? {
        // A free port: bound by a listener, then released for the proxy.
        let probe = try TCPListener.bind(host: "127.0.0.1")
        let port = probe.port
        await probe.close()
        let directory = NSTemporaryDirectory() + "tether-tinyproxy-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var configuration = """
            Port \(port)
            Listen 127.0.0.1
            Timeout 30
            MaxClients 64
            LogLevel Info
            DisableViaHeader Yes
            Allow \(allow)

            """
        if let basicAuth { configuration += "BasicAuth \(basicAuth.user) \(basicAuth.password)\n" }
        let file = directory + "/tinyproxy.conf"
        try configuration.write(toFile: file, atomically: true, encoding: .utf8)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["-d", "-c", file]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let log = ProcessLog(reading: pipe.fileHandleForReading)
        // Ready when it says so; an exit before that is a failure.
        guard await log.text(once: "Accepting connections") != nil else {
            process.waitUntilExit()
            try? FileManager.default.removeItem(atPath: directory)
            return nil
        }
        return (port, directory, process, log)
    }

    /// `http://127.0.0.1:PORT`, with user info when given.
    package func url(user: String? = nil, password: String? = nil) -> String {
        let userInfo = user.map { "\($0):\(password ?? "")@" } ?? ""
        return "http://\(userInfo)127.0.0.1:\(self.port)"
    }

    /// Kills it (SIGKILL: tinyproxy may take its time over SIGTERM), reaps it and removes its directory. Once: a
    /// second call does nothing (its process id may already name another process).
    package func stop() {
        guard !self.stopped.exchange(true, ordering: .relaxed) else { return }
        kill(self.process.processIdentifier, SIGKILL)
        self.process.waitUntilExit()
        try? FileManager.default.removeItem(atPath: self.directory)
    }

    /// Everything the proxy logged, once it has exited: call it after `stop()`. It logs the request line of each
    /// request (`CONNECT 127.0.0.1:PORT HTTP/1.1`), never its header fields, so no credential.
    package func exitedLog() async -> String {
        await self.log.text(once: nil) ?? ""
    }
}

package enum TinyProxyError: Error {
    case missing
    case didNotStart
}

/// A child process's output, read to its end by a thread of its own (a blocking read must not hold one of the
/// cooperative pool's few threads), for tasks that wait until it says something or ends.
final class ProcessLog: Sendable {
    private struct State {
        var text = ""
        var ended = false
        /// Who waits for which text; nil: for the end.
        var waiters: [(text: String?, continuation: CheckedContinuation<String?, Never>)] = []
    }

    private let state = Mutex(State())

    init(reading handle: FileHandle) {
        Thread.detachNewThread {
            while true {
                let data = handle.availableData
                if data.isEmpty { break }
                self.append(String(decoding: data, as: UTF8.self))
            }
            self.end()
        }
    }

    /// All the output so far once it contains `text`, or nil if it ends first; with `text` nil, all the output once
    /// it has ended.
    func text(once text: String?) async -> String? {
        await withCheckedContinuation { continuation in
            let answer: String?? = self.state.withLock { state in
                if let text, state.text.contains(text) { return .some(state.text) }
                if state.ended { return .some(text == nil ? state.text : nil) }
                state.waiters.append((text, continuation))
                return .none
            }
            if let answer { continuation.resume(returning: answer) }
        }
    }

    private func append(_ text: String) {
        let (answered, all) = self.state.withLock { state in
            state.text += text
            let waiters = state.waiters
            state.waiters = []
            var answered: [CheckedContinuation<String?, Never>] = []
            for waiter in waiters {
                if let wanted = waiter.text, state.text.contains(wanted) {
                    answered.append(waiter.continuation)
                } else {
                    state.waiters.append(waiter)
                }
            }
            return (answered, state.text)
        }
        for continuation in answered { continuation.resume(returning: all) }
    }

    private func end() {
        let (waiters, text) = self.state.withLock { state in
            state.ended = true
            defer { state.waiters = [] }
            return (state.waiters, state.text)
        }
        for waiter in waiters { waiter.continuation.resume(returning: waiter.text == nil ? text : nil) }
    }
}
#endif
