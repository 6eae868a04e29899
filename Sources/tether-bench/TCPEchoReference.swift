// The same-run ceiling for `echo`: sequential round trips of 70 bytes (a masked 64-byte frame's size) over a bare
// `TCPConnection`, between a handler on the shared loop (the client's side) and an echoing handler on a loop of
// its own (the server's side, as `TestServer` has). No WebSocket framing, no tasks, no actor: two loop threads
// and the kernel. Printed as `echo.tcp_rtt_70b_per_s`, it shows what this machine allows at the moment of the run.
#if os(Linux)
import Foundation
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
