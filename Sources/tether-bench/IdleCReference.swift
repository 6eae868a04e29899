// The same-run floor for `idle.cpu_percent`: the bare C client doing the same work with no library.
#if os(Linux)
import Foundation

/// Runs `bare_c_client idle URL N S` (scripts/peers/bare_c_client.c) in a child process against the benchmark's
/// server: N connections, each pinging one second after its previous pong, one write per ping, one read per pong, a
/// 10 ms timer wheel, one epoll loop. Its CPU over its own hold is the floor the clients' CPU is divided by.
enum IdleCReference {
    /// The C client's CPU over a hold of `seconds` at `connections` connections, in % of one core; nil (with a
    /// warning) when there is no binary and it cannot be built.
    /// - Parameter binary: the C client, built already; nil: built here with `cc -O2` from the source next to this
    ///   file, into a temporary directory removed afterwards.
    static func measure(url: URL, connections: Int, seconds: Int, binary: String?) async throws -> Double? {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tether-bench-\(getpid())")
        defer { try? FileManager.default.removeItem(at: directory) }
        guard let executable = binary ?? self.build(into: directory) else { return nil }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["idle", url.absoluteString, String(connections), String(seconds)]
        let output = Pipe()
        process.standardOutput = output
        try await self.run(process)
        // A few short lines: they wait in the pipe until the child has exited.
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        var figures: [String: Double] = [:]
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            if fields.count == 2, let value = Double(fields[1]) { figures[String(fields[0])] = value }
        }
        guard process.terminationStatus == 0, let cpu = figures["c.cpu_percent"], let pongs = figures["c.pongs"] else {
            throw EchoBench.Failure("the C reference failed (exit status \(process.terminationStatus))")
        }
        EchoBench.progress("idle: C reference, \(Int(pongs)) pongs")
        return cpu
    }

    /// Runs `process` and returns once it has exited, without holding a thread meanwhile.
    private static func run(_ process: Process) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            process.terminationHandler = { _ in continuation.resume() }
            do {
                try process.run()
            } catch {
                process.terminationHandler = nil
                continuation.resume(throwing: error)
            }
        }
    }

    /// Compiles scripts/peers/bare_c_client.c (found from this file's path at build time, so in the checkout the
    /// benchmark was built from) into `directory`; nil, with a warning, when the source or `cc` is missing.
    private static func build(into directory: URL) -> String? {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let source = root.appendingPathComponent("scripts/peers/bare_c_client.c").path
        guard FileManager.default.isReadableFile(atPath: source) else {
            EchoBench.progress("idle: warning: no \(source): the C reference skipped (--c-reference PATH gives one)")
            return nil
        }
        let binary = directory.appendingPathComponent("bare_c_client").path
        let compiler = Process()
        compiler.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        compiler.arguments = ["cc", "-O2", "-o", binary, source]
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try compiler.run()
            compiler.waitUntilExit()
        } catch {
            EchoBench.progress("idle: warning: cannot run cc (\(error)): the C reference skipped")
            return nil
        }
        guard compiler.terminationStatus == 0 else {
            EchoBench.progress("idle: warning: cc failed on \(source): the C reference skipped")
            return nil
        }
        return binary
    }
}
#endif
