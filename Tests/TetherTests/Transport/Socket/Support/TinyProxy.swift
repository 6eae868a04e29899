#if os(Linux)
import Foundation
import TetherPOSIX

/// A real HTTP proxy for tests: Debian's `tinyproxy`, bound to 127.0.0.1 on a free port with a configuration
/// generated in a temporary directory, run in the foreground and stopped by `stop()`. Ready once it logs that it
/// accepts connections (an explicit signal, not a delay).
final class TinyProxy: @unchecked Sendable {
    // `@unchecked Sendable` is safe: every stored property is immutable after `init` (`Process` is only asked to
    // terminate and waited for, which Foundation allows from any thread).
    static let executable: String? = ["/usr/bin/tinyproxy", "/usr/sbin/tinyproxy"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    /// Why tests that need it skip, when it is missing.
    static let missing = "tinyproxy is not installed (apt-get install tinyproxy; .ci/run installs it)"

    let port: Int
    let directory: String
    private let process: Process

    /// - Parameters:
    ///   - basicAuth: the one user and password the proxy accepts (others get 407).
    ///   - allow: the client address allowed (others get 403).
    init(basicAuth: (user: String, password: String)? = nil, allow: String = "127.0.0.1") async throws {
        guard let executable = Self.executable else { throw TinyProxyError.missing }
        // The port is found free, then released for the proxy: a test running beside this one may take it first, and
        // then the proxy cannot listen and exits. A few tries, each with a new port.
        for _ in 0..<5 {
            if let started = try await Self.start(executable, basicAuth: basicAuth, allow: allow) {
                (self.port, self.directory, self.process) = started
                return
            }
        }
        throw TinyProxyError.didNotStart
    }

    private static func start(
        _ executable: String, basicAuth: (user: String, password: String)?, allow: String
    ) async throws -> (port: Int, directory: String, process: Process)? {
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
        let log = Pipe()
        process.standardOutput = log
        process.standardError = log
        try process.run()
        // Ready when it says so; an exit before that is a failure. Its log is read by a thread of its own (a
        // blocking read must not hold one of the cooperative pool's few threads) until it exits.
        let ready = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            Thread.detachNewThread {
                var text = ""
                var answered = false
                while true {
                    let data = log.fileHandleForReading.availableData
                    if data.isEmpty { break }
                    guard !answered else { continue }
                    text += String(decoding: data, as: UTF8.self)
                    if text.contains("Accepting connections") {
                        answered = true
                        continuation.resume(returning: true)
                    }
                }
                if !answered { continuation.resume(returning: false) }
            }
        }
        guard ready else {
            process.waitUntilExit()
            try? FileManager.default.removeItem(atPath: directory)
            return nil
        }
        return (port, directory, process)
    }

    /// `http://127.0.0.1:PORT`, with user info when given.
    func url(user: String? = nil, password: String? = nil) -> String {
        let userInfo = user.map { "\($0):\(password ?? "")@" } ?? ""
        return "http://\(userInfo)127.0.0.1:\(self.port)"
    }

    /// Kills it (SIGKILL: tinyproxy may take its time over SIGTERM) and reaps it.
    func stop() {
        kill(self.process.processIdentifier, SIGKILL)
        self.process.waitUntilExit()
    }
}

enum TinyProxyError: Error {
    case missing
    case didNotStart
}
#endif
