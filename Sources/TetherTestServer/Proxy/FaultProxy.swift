#if os(Linux)
import Synchronization
import TetherPOSIX

/// A TCP proxy that does to the connections it relays what an unreliable network does: adds latency, cuts every
/// write in two (so that frames arrive in halves, far apart), black-holes both directions while the connections stay
/// up, resets every connection, or cuts a connection in the middle of a frame (half of the next bytes to the client
/// pass, then both sides are reset). For tests of what must survive such faults (docs/delivery.md, "Proof under
/// faults"). Each connection accepted on `port` is relayed to `upstreamPort` on the loopback.
///
/// Each direction holds at most 64 KiB and stops reading its source while full, so that TCP's pressure reaches the
/// sender. A relayed connection is forgotten once both its sides have ended: connections come and go for as long as
/// the proxy runs without growing its memory. Runs on a loop thread of its own (unless given one); the controls may
/// be called from any thread.
package final class FaultProxy: Sendable {
    /// The port the proxy listens on (127.0.0.1).
    package let port: Int
    let loop: EventLoop
    /// The proxy made `loop` (and shuts it down).
    private let ownsLoop: Bool
    private let listener: TCPListener
    let controls: Controls

    /// What the links read and the test controls, from any thread.
    final class Controls: Sendable {
        /// Added to every chunk of bytes in either direction.
        let latency: Duration
        /// Every chunk read is passed in two writes, its second half `splitGap` after its first.
        let splitting: Bool
        static let splitGap = Duration.milliseconds(3)
        /// Nothing passes either way.
        let blackHoled = Atomic(false)
        /// The connections being relayed, to fault them, kick them after a black hole, and stop them.
        let links = Mutex<[LoopBound<FaultyLink>]>([])
        let accepted = Atomic(0)
        let passedToClient = Atomic(0)
        let passedToServer = Atomic(0)

        init(latency: Duration, splitting: Bool) {
            self.latency = latency
            self.splitting = splitting
        }
    }

    /// - Parameters:
    ///   - upstreamPort: the port on 127.0.0.1 each connection is relayed to.
    ///   - latency: added to every chunk of bytes, each way (default none).
    ///   - splitting: pass every chunk in two writes a few milliseconds apart, so that frames arrive in halves.
    ///   - loop: where the sockets and timers run; nil (the default): a loop of the proxy's own.
    package init(
        upstreamPort: Int, latency: Duration = .zero, splitting: Bool = false, loop: EventLoop? = nil
    ) throws(SocketError) {
        let listening = try ProxyListening(loop: loop, name: "tether-faults")
        let loop = listening.loop
        let listener = listening.listener
        self.loop = loop
        self.ownsLoop = listening.ownsLoop
        self.listener = listener
        self.port = listener.port
        let controls = Controls(latency: latency, splitting: splitting)
        self.controls = controls
        let upstream = SocketAddress(ip: "127.0.0.1", port: upstreamPort)
        listener.start { client in
            controls.accepted.add(1, ordering: .relaxed)
            guard let upstream else { return client.reset() }
            FaultyLink.start(client: client, upstream: upstream, loop: loop, controls: controls)
        }
    }

    /// Connections accepted so far.
    package var acceptedConnections: Int { self.controls.accepted.load(ordering: .relaxed) }

    /// Connections being relayed now (each two sockets of the proxy's).
    package var liveConnections: Int { self.controls.links.withLock { $0.count } }

    /// Bytes passed so far to clients and to the server, on every connection.
    package var passed: (toClient: Int, toServer: Int) {
        (self.controls.passedToClient.load(ordering: .relaxed), self.controls.passedToServer.load(ordering: .relaxed))
    }

    /// Starts (`true`) or ends a black hole: nothing passes either way, the connections stay up and what arrives
    /// waits (within the bound, then in the senders' sockets).
    package func blackHole(_ on: Bool) {
        self.controls.blackHoled.store(on, ordering: .relaxed)
        guard !on else { return }
        for link in self.controls.links.withLock({ $0 }) {
            _ = self.loop.execute { link.value.kick() }
        }
    }

    /// Resets every connection being relayed: both sides see a TCP reset. Returns once done.
    package func resetConnections() async {
        await self.onEveryLink { $0.reset() }
    }

    /// Cuts every connection being relayed in the middle of a frame: half of the next bytes to the client pass,
    /// then both sides are reset. Returns once armed.
    package func cutConnections() async {
        await self.onEveryLink { $0.cut() }
    }

    private func onEveryLink(_ body: @escaping @Sendable (FaultyLink) -> Void) async {
        for link in self.controls.links.withLock({ $0 }) {
            _ = try? await self.loop.submit { body(link.value) }
        }
    }

    deinit {
        // A proxy dropped without `stop()` must not leave its thread and sockets behind.
        if self.ownsLoop, !self.loop.inEventLoop { self.loop.shutdown() }
    }

    /// Stops listening and resets every relayed connection (and ends the proxy's own loop).
    package func stop() async {
        await self.listener.close()
        await self.resetConnections()
        if self.ownsLoop { self.loop.shutdown() }
    }
}
#endif
