import Foundation
import Synchronization
import Testing
@testable import TetherCLI

@Suite struct OutputQueueTests {
    /// Standard streams whose writes wait for `release()`, once `hold()` was called.
    final class HeldSink: Sendable {
        private let state = Mutex<(held: Bool, written: String, waiting: Bool)>((false, "", false))
        private let gate = DispatchSemaphore(value: 0)
        private let entered = DispatchSemaphore(value: 0)

        var io: CommandIO {
            CommandIO(write: { self.write($0) }, writeError: { self.write("[err]" + $0) })
        }

        var written: String { self.state.withLock { $0.written } }

        func hold() { self.state.withLock { $0.held = true } }

        /// Waits until a write is held (on a thread of the test's own, not the cooperative pool).
        func waitUntilAWriteIsHeld() async {
            await withCheckedContinuation { continuation in
                Thread.detachNewThread {
                    self.entered.wait()
                    continuation.resume()
                }
            }
        }

        func release() {
            let waiting = self.state.withLock { state in
                state.held = false
                return state.waiting
            }
            if waiting { self.gate.signal() }
        }

        private func write(_ text: String) {
            let held = self.state.withLock { state in
                state.waiting = state.held
                return state.held
            }
            if held {
                self.entered.signal()
                self.gate.wait()
            }
            self.state.withLock { $0.written += text }
        }
    }

    @Test func everythingQueuedIsWrittenInOrderAcrossBothStreams() async {
        let sink = HeldSink()
        let queue = OutputQueue(io: sink.io)
        #expect(await queue.write("a\n"))
        queue.append([.init(stream: .error, text: "status\n"), .init(stream: .output, text: "b\n")])
        #expect(queue.offer("c\n"))
        await queue.finish()
        #expect(sink.written == "a\n[err]status\nb\nc\n")
    }

    @Test func aFullQueueMakesWritersWaitUntilTheWriteInProgressReturns() async {
        let sink = HeldSink()
        sink.hold()
        let queue = OutputQueue(io: sink.io, limit: 8)
        #expect(await queue.write("12345678"))  // reaches the limit: the thread takes it and is held
        await sink.waitUntilAWriteIsHeld()
        #expect(!queue.offer("x"))  // bytes being written still count
        let waiting = Task { await queue.write("9") }
        sink.release()
        #expect(await waiting.value)
        await queue.finish()
        #expect(sink.written == "123456789")
    }

    @Test func abandonEndsEveryWaitWhileAWriteNeverReturns() async {
        let sink = HeldSink()
        sink.hold()
        let queue = OutputQueue(io: sink.io, limit: 4)
        #expect(await queue.write("full"))
        await sink.waitUntilAWriteIsHeld()
        let waiting = Task { await queue.write("more") }
        let finishing = Task { await queue.finish() }
        queue.abandon()
        #expect(await waiting.value == false)
        await finishing.value
        #expect(!queue.append([.init(stream: .output, text: "late")]))
        sink.release()  // the stuck write returns; what was queued after it is dropped
    }

    @Test func cancellingAWriterEndsItsWaitForRoom() async {
        let sink = HeldSink()
        sink.hold()
        let queue = OutputQueue(io: sink.io, limit: 4)
        #expect(await queue.write("full"))
        await sink.waitUntilAWriteIsHeld()
        let waiting = Task { await queue.write("more") }
        waiting.cancel()
        #expect(await waiting.value == false)
        sink.release()
        await queue.finish()
        #expect(sink.written == "full")
    }
}
