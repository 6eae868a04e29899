// The same-run ceiling for `echo`: sequential round trips of 70 bytes (a masked 64-byte frame's size) over a bare
// `TCPConnection`, between a handler on the shared loop (the client's side) and an echoing handler on a loop of
// its own (the server's side, as `TestServer` has). No WebSocket framing, no tasks, no actor: two loop threads
// and the kernel. Printed as `echo.tcp_rtt_70b_per_s`, it shows what this machine allows at the moment of the run.
//
// `echo.tcp_pool_rtt_70b_per_s` is the same exchange with the client's side split the way a consumer of
// `client.events` on the global pool splits it: the loop thread only reads and resumes a waiting task, and that
// task, on a thread of the global pool, writes the next payload. That is one thread hop per round trip more than the
// loop-only reference and nothing else: the same-run reference for a client whose application code runs on the pool,
// before any framing, actor or event stream costs.
#if os(Linux)
import Foundation
import Synchronization
import TetherPOSIX

enum TCPEchoReference {
    /// Echoes whatever arrives, from the server's loop thread.
    private final class Echo: TCPConnectionHandler {
        func received(_ bytes: UnsafeRawBufferPointer, on connection: TCPConnection) {
            connection.write(borrowing: bytes)
        }

        func ended(_ end: TCPConnection.End, on connection: TCPConnection) {}
    }

    /// The 70-byte payload (a masked 64-byte frame's size) both references send.
    private static let payload = [UInt8](repeating: 0x5A, count: 70)

    /// Bytes back from the echo server, until a whole payload has returned.
    private struct EchoBytes {
        private var pending = 0

        /// True when `count` more bytes complete an echo of the payload.
        mutating func add(_ count: Int) -> Bool {
            self.pending += count
            guard self.pending >= TCPEchoReference.payload.count else { return false }
            self.pending -= TCPEchoReference.payload.count
            return true
        }
    }

    /// The clock of one run: a warm-up of 1 s, then round trips counted for `seconds`.
    private struct Run {
        let seconds: Double
        private let warmUpEnd = ContinuousClock.now + .seconds(1)
        private var start: ContinuousClock.Instant?
        private var count = 0

        init(seconds: Double) {
            self.seconds = seconds
        }

        /// An echo came back; the count and the measured time once the run is over.
        mutating func echoed() -> (count: Int, seconds: Double)? {
            let now = ContinuousClock.now
            if let start = self.start {
                self.count += 1
                let elapsed = EchoBench.seconds(start.duration(to: now))
                if elapsed >= self.seconds { return (self.count, elapsed) }
            } else if now >= self.warmUpEnd {
                self.start = now
            }
            return nil
        }
    }

    /// Sends the payload again each time its echo is complete, until the end of the run; then reports the count.
    private final class Pinger: TCPConnectionHandler {
        private var bytes = EchoBytes()
        private var run: Run
        private var finished = false
        private let done: @Sendable ((count: Int, seconds: Double)?) -> Void

        init(seconds: Double, done: @escaping @Sendable ((count: Int, seconds: Double)?) -> Void) {
            self.run = Run(seconds: seconds)
            self.done = done
        }

        func begin(on connection: TCPConnection) {
            connection.write(TCPEchoReference.payload)
        }

        func received(_ bytes: UnsafeRawBufferPointer, on connection: TCPConnection) {
            guard self.bytes.add(bytes.count) else { return }
            if let outcome = self.run.echoed() {
                self.finish(outcome)
                connection.close()
                return
            }
            connection.write(TCPEchoReference.payload)
        }

        /// A connection that ends early reports no round trips.
        func ended(_ end: TCPConnection.End, on connection: TCPConnection) {
            self.finish(nil)
        }

        private func finish(_ outcome: (count: Int, seconds: Double)?) {
            guard !self.finished else { return }
            self.finished = true
            self.done(outcome)
        }
    }

    /// The client's side of the pool-hop reference: the loop thread counts bytes and hands each complete echo to
    /// the task waiting in `nextEcho()`, which runs on the global pool.
    private final class Relay: TCPConnectionHandler, Sendable {
        private enum Slot {
            case empty
            case arrived
            case waiting(CheckedContinuation<Bool, Never>)
            case ended
        }

        /// Touched only on the loop thread, but a `Sendable` class keeps it locked.
        private let bytes = Mutex(EchoBytes())
        private let slot = Mutex(Slot.empty)

        func received(_ bytes: UnsafeRawBufferPointer, on connection: TCPConnection) {
            if self.bytes.withLock({ $0.add(bytes.count) }) { self.signal(ended: false) }
        }

        func ended(_ end: TCPConnection.End, on connection: TCPConnection) {
            self.signal(ended: true)
        }

        private func signal(ended: Bool) {
            let waiter: CheckedContinuation<Bool, Never>? = self.slot.withLock { slot in
                switch slot {
                case .waiting(let continuation):
                    slot = ended ? .ended : .empty
                    return continuation
                case .empty, .arrived:
                    slot = ended ? .ended : .arrived
                    return nil
                case .ended:
                    return nil
                }
            }
            waiter?.resume(returning: !ended)
        }

        /// Waits for the next complete echo; false once the connection ended.
        func nextEcho() async -> Bool {
            await withCheckedContinuation { continuation in
                let ready: Bool? = self.slot.withLock { slot in
                    switch slot {
                    case .arrived:
                        slot = .empty
                        return true
                    case .ended:
                        return false
                    case .empty:
                        slot = .waiting(continuation)
                        return nil
                    case .waiting:
                        preconditionFailure("one task waits for echoes")
                    }
                }
                if let ready { continuation.resume(returning: ready) }
            }
        }
    }

    /// Round trips per second, the client's side on the shared loop.
    static func measure(seconds: Double) async throws -> Double {
        try await self.againstEchoServer(label: "") { connection in
            await withCheckedContinuation { continuation in
                EventLoop.shared.execute {
                    let pinger = Pinger(seconds: seconds) { continuation.resume(returning: $0) }
                    connection.setHandler(pinger)
                    pinger.begin(on: connection)
                }
            }
        }
    }

    /// Round trips per second, each echo handed from the loop thread to a task on the global pool that writes the
    /// next payload (see the file's comment).
    static func measurePoolHop(seconds: Double) async throws -> Double {
        try await self.againstEchoServer(label: " with a pool hop") { connection in
            let relay = Relay()
            EventLoop.shared.execute { connection.setHandler(relay) }
            // A task of its own with no executor preference, so that it runs on the global pool like a consumer.
            let outcome = await Task.detached { () -> (count: Int, seconds: Double)? in
                var run = Run(seconds: seconds)
                while true {
                    connection.write(TCPEchoReference.payload)
                    guard await relay.nextEcho() else { return nil }
                    if let outcome = run.echoed() { return outcome }
                }
            }.value
            connection.close()
            return outcome
        }
    }

    /// Connects to an echoing server on a loop of its own, runs `exchange` on the connection, and returns its
    /// round trips per second; nil from `exchange` means the connection ended during the run.
    private static func againstEchoServer(
        label: String, _ exchange: (TCPConnection) async -> (count: Int, seconds: Double)?
    ) async throws -> Double {
        let serverLoop = try EventLoop(name: "tether-tcpref")
        defer { serverLoop.shutdown() }  // closes the server's side of the connection too
        let listener = try TCPListener.bind(loop: serverLoop)
        listener.start { connection in connection.setHandler(Echo()) }
        let connection = try await TCPConnection.connect(to: [listener.address], timeout: .seconds(5))
        let outcome = await exchange(connection)
        await listener.close()
        guard let outcome, outcome.count > 0 else {
            throw EchoBench.Failure("the bare TCP connection ended during the run")
        }
        let seconds = WireBench.format(outcome.seconds)
        EchoBench.progress("echo: \(outcome.count) bare TCP round trips of 70 B\(label) in \(seconds) s")
        return Double(outcome.count) / outcome.seconds
    }
}
#endif
