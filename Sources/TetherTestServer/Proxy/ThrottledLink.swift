#if os(Linux)
import TetherPOSIX

/// One connection relayed by `ThrottlingProxy`: the client's socket, the server's, and a throttled pipe each way.
/// Loop-confined (it lives in a `LoopBound`).
final class ThrottledLink: RelayedConnection {
    /// The bytes of one direction: read from its source, passed to its destination at the rate.
    private struct Pipe {
        let direction: ThrottlingProxy.Direction
        /// Read and not passed yet, from `head` on.
        var buffer: [UInt8] = []
        var head = 0
        /// Bytes this pipe may pass now (refilled with time, at most `burst`).
        var allowance = 0.0
        var refilledAt: ContinuousClock.Instant
        /// Passed on this connection so far.
        var passed = 0
        var readingPaused = false
        var timer: TimerHandle?
        /// How its source ended, once it has.
        var sourceEnd: TCPConnection.End?
        /// Its destination was closed or reset (nothing more passes).
        var done = false

        var waiting: Int { self.buffer.count - self.head }
    }

    /// Bytes a direction holds before it stops reading its source.
    private static let bufferLimit = 16 << 10
    /// How often bytes leave.
    private static let slice = Duration.milliseconds(10)

    let client: TCPConnection
    private var server: TCPConnection?
    private let loop: EventLoop
    private let bytesPerSecond: Int
    private let controls: ThrottlingProxy.Controls
    private var toServer: Pipe
    private var toClient: Pipe
    private weak var bound: LoopBound<ThrottledLink>?

    private init(client: TCPConnection, bytesPerSecond: Int, loop: EventLoop, controls: ThrottlingProxy.Controls) {
        self.client = client
        self.loop = loop
        self.bytesPerSecond = bytesPerSecond
        self.controls = controls
        self.toServer = Pipe(direction: .toServer, refilledAt: loop.now)
        self.toClient = Pipe(direction: .toClient, refilledAt: loop.now)
    }

    /// Relays `client` (just accepted, on the loop thread) to `upstream` once connected there.
    static func start(
        client: TCPConnection, upstream: SocketAddress, bytesPerSecond: Int, loop: EventLoop,
        controls: ThrottlingProxy.Controls
    ) {
        let bound = LoopBound(
            ThrottledLink(client: client, bytesPerSecond: bytesPerSecond, loop: loop, controls: controls), loop: loop)
        bound.value.bound = bound
        controls.links.withLock { $0.append(bound) }
        Task {
            do throws(SocketError) {
                let server = try await TCPConnection.connect(to: [upstream], timeout: .seconds(10), loop: loop)
                if !loop.execute({ bound.value.connected(to: server) }) { server.reset() }
            } catch {
                loop.execute { bound.value.reset() }
            }
        }
    }

    private func connected(to server: TCPConnection) {
        self.server = server
        self.client.setHandler(self)
        server.setHandler(self)
    }

    // MARK: - Controls

    /// A stall ended: pass what waits.
    func kick() {
        self.schedule(.toClient)
        self.schedule(.toServer)
    }

    /// Drops both connections.
    func reset() {
        self.toClient.timer?.cancel()
        self.toServer.timer?.cancel()
        self.toClient.done = true
        self.toServer.done = true
        self.client.reset()
        self.server?.reset()
    }

    // MARK: - TCPConnectionHandler

    func received(_ bytes: UnsafeRawBufferPointer, on connection: TCPConnection) {
        let direction = self.direction(of: connection)
        self.withPipe(direction) { pipe in
            pipe.buffer.append(contentsOf: bytes)
            if pipe.waiting >= Self.bufferLimit, !pipe.readingPaused {
                pipe.readingPaused = true
                connection.pauseReading()
            }
        }
        self.schedule(direction)
    }

    func sourceEnded(_ direction: ThrottlingProxy.Direction) {
        self.withPipe(direction) { $0.sourceEnd = .endOfStream }
        self.schedule(direction)
    }

    // MARK: - Passing bytes

    private func withPipe<Result>(_ direction: ThrottlingProxy.Direction, _ body: (inout Pipe) -> Result) -> Result {
        switch direction {
        case .toClient: body(&self.toClient)
        case .toServer: body(&self.toServer)
        }
    }

    private func destination(_ direction: ThrottlingProxy.Direction) -> TCPConnection? {
        direction == .toClient ? self.client : self.server
    }

    private func source(_ direction: ThrottlingProxy.Direction) -> TCPConnection? {
        direction == .toClient ? self.server : self.client
    }

    /// Arms the pipe's next slice, unless one is armed, nothing waits, or it is stalled.
    private func schedule(_ direction: ThrottlingProxy.Direction) {
        let bound = self.bound
        self.withPipe(direction) { pipe in
            guard pipe.timer == nil, !pipe.done, pipe.waiting > 0 || pipe.sourceEnd != nil else { return }
            pipe.timer = self.loop.schedule(after: Self.slice) { bound?.value.pass(direction) }
        }
    }

    /// One slice: as many bytes as the rate allowed since the last, unless stalled.
    private func pass(_ direction: ThrottlingProxy.Direction) {
        let now = self.loop.now
        let rate = Double(self.bytesPerSecond)
        let stallAfter = direction == .toClient ? self.controls.stallToClientAfter : 0
        let stalled = self.controls.isStalled(direction)
        guard let destination = self.destination(direction) else { return }
        let (bytes, resume, close) = self.withPipe(direction) { pipe -> ([UInt8], Bool, Bool) in
            pipe.timer = nil
            let (seconds, attoseconds) = pipe.refilledAt.duration(to: now).components
            let elapsed = Double(seconds) + Double(attoseconds) / 1e18
            pipe.allowance = min(pipe.allowance + elapsed * rate, rate / 20)  // at most 50 ms of bytes at once
            pipe.refilledAt = now
            var count = min(Int(pipe.allowance), pipe.waiting)
            if stalled { count = 0 }
            if stallAfter > 0 { count = min(count, max(0, stallAfter - pipe.passed)) }
            let bytes = Array(pipe.buffer[pipe.head..<(pipe.head + count)])
            pipe.head += count
            pipe.passed += count
            pipe.allowance -= Double(count)
            if pipe.head == pipe.buffer.count {
                pipe.buffer.removeAll(keepingCapacity: true)
                pipe.head = 0
            } else if pipe.head >= Self.bufferLimit, pipe.head * 2 >= pipe.buffer.count {
                pipe.buffer.removeFirst(pipe.head)  // what passed goes: each byte moves a bounded number of times
                pipe.head = 0
            }
            let resume = pipe.readingPaused && pipe.waiting < Self.bufferLimit / 2
            if resume { pipe.readingPaused = false }
            let close = pipe.waiting == 0 && pipe.sourceEnd != nil
            if close { pipe.done = true }
            return (bytes, resume, close)
        }
        if !bytes.isEmpty {
            // Counted first: the peer may read them before `write` returns.
            switch direction {
            case .toClient:
                self.controls.passedToClient.add(bytes.count, ordering: .relaxed)
                self.controls.lastPassedToClient.withLock { $0 = now }
            case .toServer: self.controls.passedToServer.add(bytes.count, ordering: .relaxed)
            }
            destination.write(bytes)
        }
        if resume { self.source(direction)?.resumeReading() }
        if close {
            destination.close()  // flushes what was passed, then FIN
            return
        }
        let stalledForGood = stallAfter > 0 && self.withPipe(direction) { $0.passed >= stallAfter }
        if !stalled, !stalledForGood { self.schedule(direction) }
    }
}
#endif
