#if os(Linux)
import Foundation
import Synchronization
import Tether

/// Python's `websockets` as the server of a randomized round (`peer.py serve --record-dir`): an echo that records
/// every message it reads to a file per connection, with permessage-deflate and context takeover both ways, and
/// closes connections on its own after a number of messages drawn from the round's seed. It takes no orders: the
/// plan's server-side closes and resets are its own, not the plan's.
final class PythonUsePeer: UsePeer {
    private let peer: PythonPeer
    private let port: Int
    private let directory: String
    /// The connections that opened and ended, as the peer printed them, and who waits for them to match.
    private final class Connections: Sendable {
        let state = Mutex<(opened: Set<Int>, ended: Set<Int>, waiters: [CheckedContinuation<Void, Never>])>(
            ([], [], []))

        func withLock<Result>(
            _ body: (inout (opened: Set<Int>, ended: Set<Int>, waiters: [CheckedContinuation<Void, Never>])) -> Result
        ) -> Result {
            self.state.withLock { body(&$0) }
        }
    }

    private let connections = Connections()
    private let reader: Task<Void, Never>

    init(seed: UInt64) async throws {
        let directory = NSTemporaryDirectory() + "tether-randomized-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let (peer, port) = try await PythonPeer.server([
            "--deflate", "--record-dir", directory, "--close-seed", "\(seed)",
        ])
        self.peer = peer
        self.port = port
        self.directory = directory
        let lines = peer.outputLines()
        let connections = self.connections
        self.reader = Task { [connections] in
            for await line in lines {
                let words = line.split(separator: " ")
                guard words.count == 2, let index = Int(words[1]) else { continue }
                let waiters = connections.withLock { state -> [CheckedContinuation<Void, Never>] in
                    if words[0] == "open" { state.opened.insert(index) } else { state.ended.insert(index) }
                    defer { state.waiters.removeAll() }
                    return state.waiters
                }
                for waiter in waiters { waiter.resume() }
            }
        }
    }

    var url: URL { URL(string: "ws://127.0.0.1:\(self.port)/record")! }

    func closeLatest(code: UInt16) async -> Bool { false }

    func resetLatest() async -> Bool { false }

    func arrivals(timeout: Duration, opened: Int) async -> Result<[[WebSocketMessage]], UsePeerFailure> {
        // `abandoning`: a wait for a line that never comes cannot be cancelled.
        let settled = await abandoning(after: timeout) { [connections] in
            while true {
                let done = connections.withLock { state in
                    state.opened.count >= opened && state.ended == state.opened
                }
                if done { return true }
                await withCheckedContinuation { continuation in
                    connections.withLock { $0.waiters.append(continuation) }
                }
            }
        }
        let (openedHere, ended) = self.connections.withLock { ($0.opened, $0.ended) }
        guard settled == true else {
            return .failure(UsePeerFailure(
                description: "connections \(openedHere.subtracting(ended).sorted()) never ended (\(opened) opened)"))
        }
        var arrivals: [[WebSocketMessage]] = []
        for index in 1...max(1, openedHere.count) where openedHere.contains(index) {
            guard let data = FileManager.default.contents(atPath: "\(self.directory)/\(index).bin") else {
                return .failure(UsePeerFailure(description: "no recording of connection \(index)"))
            }
            guard let messages = Self.messages(in: data) else {
                return .failure(UsePeerFailure(description: "the recording of connection \(index) is cut"))
            }
            arrivals.append(messages)
        }
        return .success(arrivals)
    }

    var connectionSummaries: [String] {
        let (opened, ended) = self.connections.withLock { ($0.opened, $0.ended) }
        return ["websockets: connections \(opened.sorted()) opened, \(ended.sorted()) ended"]
    }

    /// The messages of one recording: a kind byte (0 text, 1 binary), a 4-byte big-endian length, the payload.
    static func messages(in data: Data) -> [WebSocketMessage]? {
        var messages: [WebSocketMessage] = []
        var offset = data.startIndex
        while offset < data.endIndex {
            guard data.endIndex - offset >= 5 else { return nil }
            let kind = data[offset]
            let length = data[(offset + 1)..<(offset + 5)].reduce(0) { $0 << 8 | Int($1) }
            let start = offset + 5
            guard data.endIndex - start >= length else { return nil }
            let payload = data[start..<(start + length)]
            messages.append(kind == 0 ? .text(String(decoding: payload, as: UTF8.self)) : .binary(Data(payload)))
            offset = start + length
        }
        return messages
    }

    func stop() {
        self.peer.stop()
        self.reader.cancel()
        try? FileManager.default.removeItem(atPath: self.directory)
    }
}
#endif
