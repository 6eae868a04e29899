#if os(Linux)
import Synchronization
import TetherPOSIX

/// A TCP proxy that passes bytes at a fixed rate each way, as a slow link does, and can stop passing them in one
/// direction while the connections stay up (a link that black-holes mid-transfer): for tests of a heartbeat on a
/// slow link. Each connection accepted on `port` is relayed to `upstreamPort` on the loopback.
///
/// The link keeps TCP's pressure: each direction holds at most `bufferLimit` bytes, and stops reading its source
/// while full, so that a sender writing faster than the rate queues in its own socket (behind which a pong waits,
/// as on a real link). Bytes leave in small slices every 10 ms, never more than the rate allows since the last
/// slice. Runs on a loop thread of its own (unless given one), so that a busy loop elsewhere in the process does not
/// stall the link; the controls may be called from any thread.
package final class ThrottlingProxy: Sendable {
    /// The directions of a relayed connection.
    package enum Direction: Sendable {
        /// From the server to the client.
        case toClient
        /// From the client to the server.
        case toServer
    }

    /// The port the proxy listens on (127.0.0.1).
    package let port: Int
    package let bytesPerSecond: Int
    let loop: EventLoop
    /// The proxy made `loop` (and shuts it down).
    private let ownsLoop: Bool
    private let listener: TCPListener
    let controls: Controls

    /// What the test controls and reads from any thread.
    final class Controls: Sendable {
        /// Per direction: stopped passing bytes.
        let stalledToClient = Atomic(false)
        let stalledToServer = Atomic(false)
        /// Stop passing bytes to the client once this many have passed on a connection (0: never).
        let stallToClientAfter: Int
        /// Bytes passed to clients, on every connection.
        let passedToClient = Atomic(0)
        let passedToServer = Atomic(0)
        /// When bytes last passed to a client, on the loop's clock.
        let lastPassedToClient = Mutex<ContinuousClock.Instant?>(nil)
        /// The links, to kick them when a stall ends and to close them on stop.
        let links = Mutex<[LoopBound<ThrottledLink>]>([])

        init(stallToClientAfter: Int) {
            self.stallToClientAfter = stallToClientAfter
        }

        func isStalled(_ direction: Direction) -> Bool {
            switch direction {
            case .toClient: self.stalledToClient.load(ordering: .relaxed)
            case .toServer: self.stalledToServer.load(ordering: .relaxed)
            }
        }
    }

    /// - Parameters:
    ///   - upstreamPort: the port on 127.0.0.1 each connection is relayed to.
    ///   - bytesPerSecond: the rate of each direction (at least 100).
    ///   - stallingToClientAfter: on each connection, stop passing bytes to the client once this many have passed
    ///     (the connections stay up, the rest waits in the proxy and the server's socket); nil: never.
    ///   - loop: where the sockets and timers run; nil (the default): a loop of the proxy's own.
    package init(
        upstreamPort: Int, bytesPerSecond: Int, stallingToClientAfter: Int? = nil, loop: EventLoop? = nil
    ) throws(SocketError) {
        precondition(bytesPerSecond >= 100, "a rate of at least 100 bytes/s")
        self.bytesPerSecond = bytesPerSecond
        let listening = try ProxyListening(loop: loop, name: "tether-throttle")
        let loop = listening.loop
        let listener = listening.listener
        self.loop = loop
        self.ownsLoop = listening.ownsLoop
        self.listener = listener
        self.port = listener.port
        let controls = Controls(stallToClientAfter: stallingToClientAfter ?? 0)
        self.controls = controls
        let upstream = SocketAddress(ip: "127.0.0.1", port: upstreamPort)
        listener.start { client in
            guard let upstream else { return client.reset() }
            ThrottledLink.start(
                client: client, upstream: upstream, bytesPerSecond: bytesPerSecond, loop: loop, controls: controls)
        }
    }

    /// Bytes passed so far to clients (`.toClient`) or to the server (`.toServer`), on every connection.
    package func passed(_ direction: Direction) -> Int {
        switch direction {
        case .toClient: self.controls.passedToClient.load(ordering: .relaxed)
        case .toServer: self.controls.passedToServer.load(ordering: .relaxed)
        }
    }

    /// When bytes last passed to a client (on the loop's clock, the continuous clock unless the loop runs a manual
    /// one); nil before any.
    package var lastPassedToClient: ContinuousClock.Instant? {
        self.controls.lastPassedToClient.withLock { $0 }
    }

    /// Stops (`true`) or resumes passing bytes in `direction` on every connection; the connections stay up.
    package func stall(_ direction: Direction, _ stalled: Bool = true) {
        switch direction {
        case .toClient: self.controls.stalledToClient.store(stalled, ordering: .relaxed)
        case .toServer: self.controls.stalledToServer.store(stalled, ordering: .relaxed)
        }
        guard !stalled else { return }
        for link in self.controls.links.withLock({ $0 }) {
            self.loop.execute { link.value.kick() }
        }
    }

    deinit {
        // A proxy dropped without `stop()` must not leave its thread and sockets behind.
        if self.ownsLoop, !self.loop.inEventLoop { self.loop.shutdown() }
    }

    /// Stops listening and resets every relayed connection (and ends the proxy's own loop).
    package func stop() async {
        await self.listener.close()
        let links = self.controls.links.withLock { links in
            defer { links.removeAll() }
            return links
        }
        for link in links {
            _ = try? await self.loop.submit { link.value.reset() }
        }
        if self.ownsLoop { self.loop.shutdown() }
    }
}
#endif
