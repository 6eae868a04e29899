#if os(Linux)
import TetherPOSIX

/// One connection relayed by `FaultProxy`: the client's socket, the server's, and a pipe each way whose chunks pass
/// after the proxy's latency, in halves when it splits, not at all while it black-holes. Loop-confined (it lives in a
/// `LoopBound`).
final class FaultyLink: RelayedConnection {
    private struct Pipe {
        /// Chunks read and not passed yet, from `head` on, each with when it may pass.
        var chunks: [(due: ContinuousClock.Instant, bytes: [UInt8])] = []
        var head = 0
        var waitingBytes = 0
        var readingPaused = false
        var timer: TimerHandle?
        /// Its source sent its end of stream: once the chunks passed, the destination is closed.
        var sourceEnded = false
        /// Nothing more passes (its destination was closed, or the link reset).
        var done = false

        var isEmpty: Bool { self.head == self.chunks.count }
    }

    /// Bytes a direction holds before it stops reading its source.
    private static let bufferLimit = 64 << 10

    let client: TCPConnection
    private var server: TCPConnection?
    private let loop: EventLoop
    private let controls: FaultProxy.Controls
    private var toServer = Pipe()
    private var toClient = Pipe()
    /// The next bytes to the client pass in half, then the link is reset (`FaultProxy.cutConnections()`).
    private var cutPending = false
    private weak var bound: LoopBound<FaultyLink>?

    private init(client: TCPConnection, loop: EventLoop, controls: FaultProxy.Controls) {
        self.client = client
        self.loop = loop
        self.controls = controls
    }

    /// Relays `client` (just accepted, on the loop thread) to `upstream` once connected there.
    static func start(client: TCPConnection, upstream: SocketAddress, loop: EventLoop, controls: FaultProxy.Controls) {
        let bound = LoopBound(FaultyLink(client: client, loop: loop, controls: controls), loop: loop)
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
        guard !self.toClient.done else { return server.reset() }  // reset while connecting
        self.server = server
        self.client.setHandler(self)
        server.setHandler(self)
    }

    // MARK: - Faults

    /// A black hole ended: pass what waits.
    func kick() {
        self.schedule(.toClient)
        self.schedule(.toServer)
    }

    /// Drops both connections (RST) and forgets the link.
    func reset() {
        self.toClient.timer?.cancel()
        self.toServer.timer?.cancel()
        self.toClient.done = true
        self.toServer.done = true
        self.client.reset()
        self.server?.reset()
        self.forget()
    }

    /// Cuts the connection in the middle of the next bytes to the client.
    func cut() {
        self.cutPending = true
    }

    /// Passes the first half of `bytes` to the client and ends its connection after them (a frame cut in half: the
    /// client reads half of it, then the end of the stream); the server's side is reset.
    private func cutMidway(_ bytes: [UInt8]) {
        self.toClient.timer?.cancel()
        self.toServer.timer?.cancel()
        self.toClient.done = true
        self.toServer.done = true
        self.controls.passedToClient.add(bytes.count / 2, ordering: .relaxed)
        self.client.write(Array(bytes.prefix(bytes.count / 2)))
        self.client.close()  // flushes the half, then FIN (a reset would discard it in the kernel)
        self.server?.reset()
        self.forget()
    }

    private func forget() {
        guard let bound = self.bound else { return }
        self.bound = nil
        self.controls.links.withLock { links in links.removeAll { $0 === bound } }
    }

    // MARK: - TCPConnectionHandler

    func received(_ bytes: UnsafeRawBufferPointer, on connection: TCPConnection) {
        let direction = self.direction(of: connection)
        let due = self.loop.now + self.controls.latency
        let halves: [[UInt8]]
        if self.controls.splitting, bytes.count >= 2 {
            let middle = bytes.count / 2
            halves = [Array(bytes[..<middle]), Array(bytes[middle...])]
        } else {
            halves = [Array(bytes)]
        }
        self.withPipe(direction) { pipe in
            for (index, half) in halves.enumerated() {
                pipe.chunks.append((due + FaultProxy.Controls.splitGap * index, half))
            }
            pipe.waitingBytes += bytes.count
            if pipe.waitingBytes >= Self.bufferLimit, !pipe.readingPaused {
                pipe.readingPaused = true
                connection.pauseReading()
            }
        }
        self.schedule(direction)
    }

    func sourceEnded(_ direction: ThrottlingProxy.Direction) {
        self.withPipe(direction) { $0.sourceEnded = true }
        self.schedule(direction)
    }

    // MARK: - Passing bytes

    private func withPipe<Result>(_ direction: ThrottlingProxy.Direction, _ body: (inout Pipe) -> Result) -> Result {
        switch direction {
        case .toClient: body(&self.toClient)
        case .toServer: body(&self.toServer)
        }
    }

    /// Arms the pipe's timer at its first chunk's time, unless one is armed, nothing waits, or it is black-holed.
    private func schedule(_ direction: ThrottlingProxy.Direction) {
        guard !self.controls.blackHoled.load(ordering: .relaxed) else { return }
        let bound = self.bound
        let now = self.loop.now
        self.withPipe(direction) { pipe in
            guard pipe.timer == nil, !pipe.done, !pipe.isEmpty || pipe.sourceEnded else { return }
            let due = pipe.isEmpty ? now : pipe.chunks[pipe.head].due
            pipe.timer = self.loop.schedule(at: due) { bound?.value.pass(direction) }
        }
    }

    /// Passes every chunk that is due, unless black-holed; cuts the connection when a cut is pending.
    private func pass(_ direction: ThrottlingProxy.Direction) {
        let now = self.loop.now
        let blackHoled = self.controls.blackHoled.load(ordering: .relaxed)
        guard let destination = direction == .toClient ? self.client : self.server else { return }
        var due: [[UInt8]] = []
        let (resume, close) = self.withPipe(direction) { pipe -> (Bool, Bool) in
            pipe.timer = nil
            guard !blackHoled else { return (false, false) }
            while !pipe.isEmpty, pipe.chunks[pipe.head].due <= now {
                due.append(pipe.chunks[pipe.head].bytes)
                pipe.waitingBytes -= pipe.chunks[pipe.head].bytes.count
                pipe.head += 1
            }
            if pipe.isEmpty {
                pipe.chunks.removeAll(keepingCapacity: true)
                pipe.head = 0
            } else if pipe.head >= 64, pipe.head * 2 >= pipe.chunks.count {
                pipe.chunks.removeFirst(pipe.head)
                pipe.head = 0
            }
            let resume = pipe.readingPaused && pipe.waitingBytes < Self.bufferLimit / 2
            if resume { pipe.readingPaused = false }
            let close = pipe.isEmpty && pipe.sourceEnded
            if close { pipe.done = true }
            return (resume, close)
        }
        for bytes in due {
            if direction == .toClient, self.cutPending, bytes.count >= 2 {
                self.cutMidway(bytes)
                return
            }
            switch direction {
            case .toClient: self.controls.passedToClient.add(bytes.count, ordering: .relaxed)
            case .toServer: self.controls.passedToServer.add(bytes.count, ordering: .relaxed)
            }
            destination.write(bytes)
        }
        if resume { (direction == .toClient ? self.server : self.client)?.resumeReading() }
        if close {
            destination.close()  // flushes what was passed, then FIN
            if self.toClient.done, self.toServer.done { self.forget() }
            return
        }
        self.schedule(direction)
    }
}
#endif
