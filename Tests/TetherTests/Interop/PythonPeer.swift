#if os(Linux)
import Foundation
import Testing
import TetherTesting

/// `scripts/interop/peer.py`, Python's `websockets` as a third-party peer, run as a child process.
///
/// `scripts/interop.sh` makes a virtual environment with `websockets==17.4` and sets `TETHER_INTEROP_PYTHON`
/// (its python) and `TETHER_INTEROP_PEER` (peer.py's absolute path). Without them the interop suites are
/// skipped, so that a plain `swift test` needs no Python packages.
final class PythonPeer: Sendable {
    static let python = ProcessInfo.processInfo.environment["TETHER_INTEROP_PYTHON"]
    static let script = ProcessInfo.processInfo.environment["TETHER_INTEROP_PEER"]
    static let isConfigured = python != nil && script != nil
    static let notConfigured: Comment =
        "needs TETHER_INTEROP_PYTHON and TETHER_INTEROP_PEER: run scripts/interop.sh (Python websockets 17.4)"
    /// Node's `ws` as the peer instead (`scripts/interop/ws-peer.cjs`), when scripts/interop.sh found or installed
    /// Node and `ws`: TETHER_INTEROP_NODE (node) and TETHER_INTEROP_WS_PEER (the script's absolute path).
    static let node = ProcessInfo.processInfo.environment["TETHER_INTEROP_NODE"]
    static let nodeScript = ProcessInfo.processInfo.environment["TETHER_INTEROP_WS_PEER"]
    static let nodeIsConfigured = node != nil && nodeScript != nil
    static let nodeNotConfigured: Comment =
        "needs TETHER_INTEROP_NODE and TETHER_INTEROP_WS_PEER: run scripts/interop.sh (Node's ws)"

    /// Which third-party peer runs.
    enum Runtime: Sendable {
        /// `peer.py`, Python's `websockets`.
        case python
        /// `ws-peer.cjs`, Node's `ws` (its own, smaller set of options: see the script).
        case node
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private let process: Process
    private let output: FileHandle
    /// Held open for the child's lifetime: the server mode stops at the end of its stdin, so that it goes
    /// away with this process however this process ends.
    private let input: Pipe

    /// Starts `python peer.py ARGUMENTS...` (or `node ws-peer.cjs ARGUMENTS...`).
    init(_ arguments: [String], runtime: Runtime = .python) throws {
        let interpreter: String
        let script: String
        switch (runtime, Self.python, Self.script, Self.node, Self.nodeScript) {
        case (.python, let python?, let path?, _, _): (interpreter, script) = (python, path)
        case (.node, _, _, let node?, let path?): (interpreter, script) = (node, path)
        case (.python, _, _, _, _): throw Failure(description: "\(Self.notConfigured)")
        case (.node, _, _, _, _): throw Failure(description: "\(Self.nodeNotConfigured)")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: interpreter)
        process.arguments = [script] + arguments
        let output = Pipe()
        let input = Pipe()
        process.standardOutput = output
        process.standardInput = input
        try process.run()
        self.process = process
        self.output = output.fileHandleForReading
        self.input = input
    }

    /// Starts the server mode and returns it with the port it listens on (its first line of output).
    /// - Parameter arguments: more options of the server mode (`--tls-cert F --tls-key F`).
    static func server(
        _ arguments: [String] = [], runtime: Runtime = .python
    ) async throws -> (peer: PythonPeer, port: Int) {
        let lifetime = runtime == .python ? ["--lifetime", "60"] : []  // ws-peer.cjs stops after 60 s by itself
        let peer = try PythonPeer(["serve"] + lifetime + arguments, runtime: runtime)
        let line = await peer.readLine()
        guard let port = line.flatMap({ Int($0) }) else {
            peer.stop()
            throw Failure(description: "the peer's server printed \(line.map { "\"\($0)\"" } ?? "nothing") for its port")
        }
        return (peer, port)
    }

    /// Runs the client mode against `url` with `arguments` and returns the report it prints once done.
    static func client(
        _ url: String, _ arguments: [String], runtime: Runtime = .python
    ) async throws -> PeerReport {
        let peer = try PythonPeer(["client", url] + arguments, runtime: runtime)
        defer { peer.stop() }
        guard let line = await peer.readLine(timeout: .seconds(40)) else {
            throw Failure(description: "the peer's client printed no report")
        }
        return try JSONDecoder().decode(PeerReport.self, from: Data(line.utf8))
    }

    /// The lines the child prints from now on (after the server's port), without their newlines, read on a thread of
    /// their own until its output ends (the child exits). Call once.
    func outputLines() -> AsyncStream<String> {
        let output = self.output
        let (lines, sink) = AsyncStream.makeStream(of: String.self)
        Thread.detachNewThread {
            var pending = Data()
            while true {
                let chunk = output.availableData
                guard !chunk.isEmpty else { break }
                pending.append(chunk)
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    sink.yield(String(decoding: pending[pending.startIndex..<newline], as: UTF8.self))
                    pending.removeSubrange(pending.startIndex...newline)
                }
            }
            sink.finish()
        }
        return lines
    }

    /// Terminates the child (if it is still running) and reaps it.
    func stop() {
        if self.process.isRunning { self.process.terminate() }
        self.process.waitUntilExit()
    }

    /// The next line of the child's output, without its newline; nil at the end of output or after `timeout`,
    /// a guard only: the line normally ends the wait. The read blocks a thread of its own, not the test's
    /// task; when the deadline cancels it, the child is terminated, which ends the read.
    private func readLine(timeout: Duration = .seconds(15)) async -> String? {
        let process = self.process
        let output = self.output
        let line = await withDeadline(timeout) {
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Data, Never>) in
                    Thread.detachNewThread {
                        var line = Data()
                        while line.last != UInt8(ascii: "\n") {
                            let chunk = output.readData(ofLength: 1)
                            guard !chunk.isEmpty else { break }
                            line.append(chunk)
                        }
                        continuation.resume(returning: line)
                    }
                }
            } onCancel: {
                if process.isRunning { process.terminate() }
            }
        }
        guard let line, line.last == UInt8(ascii: "\n") else { return nil }
        return String(decoding: line.dropLast(), as: UTF8.self)
    }
}

/// The one JSON line `peer.py client` prints: what the Python client saw.
struct PeerReport: Decodable, Sendable {
    struct Echo: Decodable, Sendable, Equatable {
        var kind: String
        var size: Int
        var identical: Bool
    }

    struct Close: Decodable, Sendable, Equatable {
        var code: Int
        var reason: String
    }

    /// Anything that went wrong in the client, or nil.
    var error: String?
    /// The subprotocol the server selected.
    var subprotocol: String?
    /// The extensions the server accepted (websockets offers permessage-deflate by default).
    var extensions: [String]?
    /// One entry per `--echo`, in order.
    var echoes: [Echo]?
    /// Pongs received for the client's own pings (`--ping`).
    var pongs: Int?
    /// Pings the server sent, each answered by websockets as it was read.
    var pingsAnswered: Int?
    /// The server's close frame (`--await-close`).
    var close: Close?

    enum CodingKeys: String, CodingKey {
        case error, subprotocol, extensions, echoes, pongs, close
        case pingsAnswered = "pings_answered"
    }
}

/// Payloads that are the same on every run and not all one byte.
enum InteropPayload {
    /// The sizes both directions exchange: the frame-length encodings' edges (7-bit, 16-bit, 64-bit), then
    /// large messages up to half the client's default 16 MiB limit.
    static let sizes = [1, 125, 126, 65_535, 65_536, 1 << 20, 8 << 20]

    /// Exactly `size` bytes of valid UTF-8 with 1-, 2-, 3- and 4-byte characters.
    static func text(bytes size: Int) -> String {
        let pattern = Array("tether ✓ héllo 🌍 ".utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(size)
        while bytes.count + pattern.count <= size { bytes.append(contentsOf: pattern) }
        bytes.append(contentsOf: repeatElement(UInt8(ascii: "."), count: size - bytes.count))
        return String(decoding: bytes, as: UTF8.self)
    }

    static func binary(bytes size: Int) -> Data {
        Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ ($0 >> 8)) })
    }

    /// Message `sequence` of sending task `task`: a JSON text of a few hundred bytes, alike enough across messages
    /// that permessage-deflate with context takeover refers back from each to the ones before it (as an app's
    /// stream of quotes or chat events would).
    static func json(task: Int, sequence: Int) -> String {
        let quotes = (0..<(2 + sequence % 5)).map { index in
            #"{"symbol":"TTHR","price":\#(100 + (sequence + index) % 7).25,"size":\#(sequence * 10 + index)}"#
        }
        return #"{"task":\#(task),"seq":\#(sequence),"quotes":[\#(quotes.joined(separator: ","))]}"#
    }

    /// The task and sequence of a text `json(task:sequence:)` made exactly, nil for anything else.
    static func parseJSON(_ text: String) -> (task: Int, sequence: Int)? {
        let fields = text.split(separator: ",", maxSplits: 2)
        guard fields.count == 3, let task = Int(fields[0].dropFirst(#"{"task":"#.count)),
              let sequence = Int(fields[1].dropFirst(#""seq":"#.count)),
              text == Self.json(task: task, sequence: sequence)
        else { return nil }
        return (task, sequence)
    }
}
#endif
