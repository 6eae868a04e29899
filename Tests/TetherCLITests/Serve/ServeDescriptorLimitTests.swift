#if os(Linux)
import Foundation
import Glibc
import Testing

/// `tether serve` in a child process whose descriptor limit is lowered with `ulimit -n`, so that
/// `accept` really fails with `EMFILE` (this test process keeps its own limit).
@Suite(.timeLimit(.minutes(1)))
struct ServeDescriptorLimitTests {
    /// The `tether` executable beside the test bundle (both are products of `swift build --build-tests`).
    static let tether: String? = {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
                readlink("/proc/self/exe", $0, buffer.count - 1)
            }
        }
        guard count > 0 else { return nil }
        let directory = URL(fileURLWithPath: String(decoding: buffer[..<count], as: UTF8.self))
            .deletingLastPathComponent()
        let path = directory.appendingPathComponent("tether").path
        return FileManager.default.isExecutableFile(atPath: path) ? path : nil
    }()

    @Test(.enabled(if: Self.tether != nil, "needs the tether executable beside the test bundle"))
    func atTheDescriptorLimitServeWaitsWithoutSpinningAndServesOnceOneIsFree() async throws {
        let server = try ServeProcess(tether: Self.tether!, descriptorLimit: 32)
        defer { server.kill() }
        let port = try #require(await blocking { server.readPort() })

        // About 13 descriptors are the process's own: most of these 40 clients cannot be accepted.
        var clients = try await blocking { () throws(POSIXError) -> [UpgradeClient] in
            var clients: [UpgradeClient] = []
            for _ in 0..<40 { clients.append(try UpgradeClient(port: port)) }
            // The first answers (a guard of 5 s, not a delay).
            UpgradeClient.poll(&clients, until: .now + .seconds(5)) { $0.contains { $0.state == .upgraded } }
            return clients
        }.get()
        // A window in which the server sits at its limit with clients in its backlog.
        let cpuBefore = try #require(server.cpuSeconds)
        let windowEnd = ContinuousClock.now + .milliseconds(500)
        clients = await blocking { [clients] in
            var clients = clients
            UpgradeClient.poll(&clients, until: windowEnd) { _ in false }
            return clients
        }
        let cpu = try #require(server.cpuSeconds) - cpuBefore

        let served = clients.indices.filter { clients[$0].state == .upgraded }
        let waiting = clients.indices.filter { clients[$0].state == .waiting }
        #expect(!served.isEmpty && !waiting.isEmpty, "\(served.count) upgraded, \(waiting.count) waiting")
        // None was reset to make room: each had its request in before it could be dropped.
        #expect(served.count + waiting.count == clients.count)
        // Retrying `accept` in a busy loop would have used most of a core for the whole window.
        #expect(cpu < 0.15, "the server used \(cpu) s of CPU in 0.5 s at its descriptor limit")

        // One descriptor frees up: a waiting client is accepted and upgraded.
        clients[try #require(served.first)].close()
        let deadline = ContinuousClock.now + .seconds(5)  // a guard, not a delay
        clients = await blocking { [clients] in
            var clients = clients
            UpgradeClient.poll(&clients, until: deadline) { clients in
                waiting.contains { clients[$0].state == .upgraded }
            }
            return clients
        }
        #expect(waiting.contains { clients[$0].state == .upgraded })
        for index in clients.indices { clients[index].close() }
    }
}

/// Runs blocking work (`read`, `poll`) on a thread of its own, so that the cooperative pool (two
/// threads on a two-core machine) keeps serving the tests that run in parallel.
private func blocking<Value: Sendable, Failure: Error>(
    _ body: @escaping @Sendable () throws(Failure) -> Value
) async -> Result<Value, Failure> {
    await withCheckedContinuation { continuation in
        Thread {
            continuation.resume(returning: Result { () throws(Failure) -> Value in try body() })
        }.start()
    }
}

private func blocking<Value: Sendable>(_ body: @escaping @Sendable () -> Value) async -> Value {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: body()) }.start()
    }
}

/// `tether serve --echo` under `/bin/sh -c 'ulimit -n N; exec tether serve ...'`.
private struct ServeProcess {
    /// Kept so that Foundation reaps the child once it is killed.
    let process: Process
    let pid: Int32
    /// The read end of the server's standard output.
    let output: Int32

    init(tether: String, descriptorLimit: Int) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "ulimit -n \(descriptorLimit) && exec \"$0\" serve --echo", tether]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        self.pid = process.processIdentifier
        // Its own descriptor, so that the pipe outlives the `Pipe` object.
        self.output = dup(output.fileHandleForReading.fileDescriptor)
    }

    /// Reads the first line, `listening on ws://127.0.0.1:PORT/ (...)`, and returns the port. Blocks.
    /// The rest of the output (a line per event) is left in the pipe: a few kilobytes here.
    func readPort() -> Int? {
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while bytes.count < 4096, read(self.output, &byte, 1) == 1, byte != UInt8(ascii: "\n") {
            bytes.append(byte)
        }
        let line = String(decoding: bytes, as: UTF8.self)
        guard let range = line.range(of: #"127\.0\.0\.1:[0-9]+"#, options: .regularExpression) else { return nil }
        return Int(line[range].split(separator: ":")[1])
    }

    /// User and system CPU time of the server so far (`/proc/PID/stat`, fields 14 and 15).
    var cpuSeconds: Double? {
        guard let stat = try? String(contentsOfFile: "/proc/\(self.pid)/stat", encoding: .utf8),
            let afterName = stat.range(of: ") ")
        else { return nil }
        // Fields from the third on, after the parenthesised command name.
        let fields = stat[afterName.upperBound...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Kills the server (Foundation reaps it) and closes the pipe.
    func kill() {
        Glibc.kill(self.pid, SIGKILL)
        Glibc.close(self.output)
    }
}

/// A blocking loopback socket that has sent an upgrade request and reads the answer with `poll`.
private struct UpgradeClient {
    enum State: Equatable {
        case waiting
        case upgraded
        case ended
    }

    private(set) var descriptor: Int32
    private(set) var state = State.waiting

    init(port: Int) throws(POSIXError) {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        // Loopback completes the TCP handshake in the server's backlog, accepted or not.
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        let request = Array((
            "GET / HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n").utf8)
        guard descriptor >= 0, connected == 0, write(descriptor, request, request.count) == request.count else {
            let error = errno
            if descriptor >= 0 { Glibc.close(descriptor) }
            throw POSIXError(POSIXErrorCode(rawValue: error) ?? .EIO)
        }
        self.descriptor = descriptor
    }

    mutating func close() {
        guard self.descriptor >= 0 else { return }
        Glibc.close(self.descriptor)
        self.descriptor = -1
        if self.state == .waiting { self.state = .ended }
    }

    /// Reads the answers of the waiting clients as they arrive, until `done` holds, none is waiting,
    /// or `deadline` passes. Blocks in `poll`.
    static func poll(
        _ clients: inout [UpgradeClient],
        until deadline: ContinuousClock.Instant,
        done: ([UpgradeClient]) -> Bool
    ) {
        while !done(clients), ContinuousClock.now < deadline {
            let waiting = clients.indices.filter { clients[$0].state == .waiting }
            guard !waiting.isEmpty else { return }
            var descriptors = waiting.map { pollfd(fd: clients[$0].descriptor, events: Int16(POLLIN), revents: 0) }
            let (seconds, attoseconds) = ContinuousClock.now.duration(to: deadline).components
            let milliseconds = Int32(clamping: max(0, seconds * 1000 + attoseconds / 1_000_000_000_000_000))
            guard Glibc.poll(&descriptors, nfds_t(descriptors.count), milliseconds) > 0 else { continue }
            for (index, entry) in zip(waiting, descriptors) where entry.revents != 0 {
                var buffer = [UInt8](repeating: 0, count: 1024)
                let count = read(entry.fd, &buffer, buffer.count)
                let answer = String(decoding: buffer.prefix(max(0, count)), as: UTF8.self)
                clients[index].state = answer.hasPrefix("HTTP/1.1 101") ? .upgraded : .ended
            }
        }
    }
}
#endif
