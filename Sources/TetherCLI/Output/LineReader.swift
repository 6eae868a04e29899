import Foundation
import Synchronization
import Glibc

/// Reads lines from a file descriptor on a thread of its own, one line per request: it reads the descriptor only
/// when asked for a line that it does not hold yet, so it is never more than one `read` (`chunkSize` bytes)
/// ahead of its consumer. Whoever writes into the descriptor (a pipe, a terminal) waits meanwhile.
final class LineReader: Sendable {
    private struct State {
        var waiter: CheckedContinuation<String?, Never>?
        var ended = false
    }

    private let state = Mutex(State())
    /// One signal per request for a line (and one to let the thread exit).
    private let requests = DispatchSemaphore(value: 0)

    /// - Parameters:
    ///   - descriptor: read until end of file or an error; not closed.
    ///   - chunkSize: bytes per `read`. Default 64 KiB.
    init(descriptor: Int32, chunkSize: Int = 1 << 16) {
        let thread = Thread { [self] in self.serve(descriptor: descriptor, chunkSize: chunkSize) }
        thread.name = "tether-stdin"
        thread.start()
    }

    /// The lines, pulled one at a time: each `next()` of the stream asks the thread for one line.
    func lines() -> AsyncStream<String> {
        AsyncStream(unfolding: { await self.next() }, onCancel: { [self] in self.end() })
    }

    /// The next line without its `\n` (or `\r\n`); nil at end of input, or when the calling task is cancelled
    /// (the line being read then is dropped).
    func next() async -> String? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<String?, Never>) in
                let ended = self.state.withLock { state -> Bool in
                    if state.ended || Task.isCancelled { return true }
                    precondition(state.waiter == nil, "LineReader.next() has one caller at a time")
                    state.waiter = continuation
                    return false
                }
                if ended {
                    continuation.resume(returning: nil)
                } else {
                    self.requests.signal()
                }
            }
        } onCancel: {
            let waiter = self.state.withLock { state in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(returning: nil)
        }
    }

    /// No more lines are wanted: the thread exits at its next request (a `read` in progress still completes).
    func end() {
        let waiter = self.state.withLock { state in
            state.ended = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: nil)
        self.requests.signal()
    }

    private func serve(descriptor: Int32, chunkSize: Int) {
        var buffered: [UInt8] = []
        var start = 0  // `buffered[start...]` is not handed out yet
        var scanned = 0  // `buffered[start..<scanned]` holds no newline
        var chunk = [UInt8](repeating: 0, count: chunkSize)
        var atEnd = false
        while true {
            self.requests.wait()
            if self.state.withLock({ $0.ended }) { return }
            var line: String?
            while true {
                if let newline = buffered[max(start, scanned)...].firstIndex(of: UInt8(ascii: "\n")) {
                    var end = newline
                    if end > start, buffered[end - 1] == UInt8(ascii: "\r") { end -= 1 }
                    line = String(decoding: buffered[start..<end], as: UTF8.self)
                    start = newline + 1
                    break
                }
                if atEnd { break }
                buffered.removeSubrange(..<start)  // only a partial line is kept before reading more
                start = 0
                scanned = buffered.count
                let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                if count <= 0 {
                    atEnd = true
                    if !buffered.isEmpty {  // a last line without its newline
                        line = String(decoding: buffered, as: UTF8.self)
                        buffered.removeAll()
                        scanned = 0
                    }
                    break
                }
                buffered.append(contentsOf: chunk[..<count])
            }
            let waiter = self.state.withLock { state in
                if line == nil { state.ended = true }
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(returning: line)
            if line == nil { return }
        }
    }
}
