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

    /// Sends the payload again each time its echo is complete, until the end of the run; then reports the count.
    private final class Pinger: TCPConnectionHandler {
        private let payload = [UInt8](repeating: 0x5A, count: 70)
        private let warmUpEnd: ContinuousClock.Instant
        private let seconds: Double
        private var start: ContinuousClock.Instant?
        private var received = 0
        private var count = 0
        private var finished = false
        private let done: @Sendable (Int, Double) -> Void

        init(seconds: Double, done: @escaping @Sendable (Int, Double) -> Void) {
            self.warmUpEnd = .now + .seconds(1)
            self.seconds = seconds
            self.done = done
        }

        func begin(on connection: TCPConnection) {
            connection.write(self.payload)
        }

        func received(_ bytes: UnsafeRawBufferPointer, on connection: TCPConnection) {
            self.received += bytes.count
            guard self.received >= self.payload.count else { return }
            self.received -= self.payload.count
            let now = ContinuousClock.now
            if let start = self.start {
                self.count += 1
                let elapsed = EchoBench.seconds(start.duration(to: now))
                if elapsed >= self.seconds {
                    self.finish(self.count, elapsed)
                    connection.close()
                    return
                }
            } else if now >= self.warmUpEnd {
                self.start = now
            }
            connection.write(self.payload)
        }

        /// A connection that ends early reports no round trips.
        func ended(_ end: TCPConnection.End, on connection: TCPConnection) {
            self.finish(0, 0)
        }

        private func finish(_ count: Int, _ elapsed: Double) {
            guard !self.finished else { return }
            self.finished = true
            self.done(count, elapsed)
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

        private let expected: Int
        /// Bytes of the echo in flight; touched only on the loop thread, but a `Sendable` class keeps it locked.
        private let inFlight = Mutex(0)
        private let slot = Mutex(Slot.empty)

        init(expected: Int) {
            self.expected = expected
        }

        func received(_ bytes: UnsafeRawBufferPointer, on connection: TCPConnection) {
            let complete = self.inFlight.withLock { received in
                received += bytes.count
                guard received >= self.expected else { return false }
                received -= self.expected
                return true
            }
            if complete { self.signal(ended: false) }
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

    /// Round trips per second, each echo handed from the loop thread to a task on the global pool that writes the
    /// next payload (see the file's comment).
    static func measurePoolHop(seconds: Double) async throws -> Double {
        let serverLoop = try EventLoop(name: "tether-tcpref")
        defer { serverLoop.shutdown() }
        let listener = try TCPListener.bind(loop: serverLoop)
        listener.start { connection in connection.setHandler(Echo()) }
        let connection = try await TCPConnection.connect(to: [listener.address], timeout: .seconds(5))
        let payload = [UInt8](repeating: 0x5A, count: 70)
        let relay = Relay(expected: payload.count)
        EventLoop.shared.execute { connection.setHandler(relay) }
        // A task of its own with no executor preference, so that it runs on the global pool like a consumer would.
        let outcome = await Task.detached { () -> (count: Int, seconds: Double)? in
            let clock = ContinuousClock()
            let warmUpEnd = clock.now + .seconds(1)
            var start: ContinuousClock.Instant?
            var count = 0
            while true {
                connection.write(payload)
                guard await relay.nextEcho() else { return nil }
                let now = clock.now
                if let start {
                    count += 1
                    let elapsed = EchoBench.seconds(start.duration(to: now))
                    if elapsed >= seconds { return (count, elapsed) }
                } else if now >= warmUpEnd {
                    start = now
                }
            }
        }.value
        connection.close()
        await listener.close()
        guard let outcome else { throw EchoBench.Failure("the bare TCP connection ended during the run") }
        let seconds = WireBench.format(outcome.seconds)
        EchoBench.progress("echo: \(outcome.count) bare TCP round trips of 70 B with a pool hop in \(seconds) s")
        return Double(outcome.count) / outcome.seconds
    }

    /// Round trips per second.
    static func measure(seconds: Double) async throws -> Double {
        let serverLoop = try EventLoop(name: "tether-tcpref")
        defer { serverLoop.shutdown() }  // closes the server's side of the connection too
        let listener = try TCPListener.bind(loop: serverLoop)
        listener.start { connection in connection.setHandler(Echo()) }
        let connection = try await TCPConnection.connect(to: [listener.address], timeout: .seconds(5))
        let (count, elapsed): (Int, Double) = await withCheckedContinuation { continuation in
            EventLoop.shared.execute {
                let pinger = Pinger(seconds: seconds) { continuation.resume(returning: ($0, $1)) }
                connection.setHandler(pinger)
                pinger.begin(on: connection)
            }
        }
        await listener.close()
        guard count > 0 else { throw EchoBench.Failure("the bare TCP connection ended during the run") }
        EchoBench.progress("echo: \(count) bare TCP round trips of 70 B in \(WireBench.format(elapsed)) s")
        return Double(count) / elapsed
    }
}
#endif
