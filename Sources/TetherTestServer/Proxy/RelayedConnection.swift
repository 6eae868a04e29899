#if os(Linux)
import TetherPOSIX

/// What the proxies' relayed connections (`ThrottledLink`, `FaultyLink`) share: which way the bytes read on a socket
/// go, and what a socket's end means — our own close is nothing, a reset (or an error) goes through at once, an end
/// of stream passes after the bytes before it.
protocol RelayedConnection: TCPConnectionHandler {
    /// The client's socket; the other one is the server's.
    var client: TCPConnection { get }
    /// The source of `direction` sent its end of stream: pass what waits, then close the destination.
    func sourceEnded(_ direction: ThrottlingProxy.Direction)
    /// Drops both sockets.
    func reset()
}

extension RelayedConnection {
    /// Where the bytes read on `connection` go.
    func direction(of connection: TCPConnection) -> ThrottlingProxy.Direction {
        connection === self.client ? .toServer : .toClient
    }

    func ended(_ end: TCPConnection.End, on connection: TCPConnection) {
        switch end {
        case .closedLocally:
            return  // we closed it
        case .failed:
            self.reset()  // a reset (or an error) goes through at once
        case .endOfStream:
            self.sourceEnded(self.direction(of: connection))  // the rest passes, then the other side is closed
        }
    }
}

/// The loop and the loopback listener of a proxy: `loop` when given, else one of the proxy's own named `name`, which
/// is shut down again when the listener cannot be bound.
struct ProxyListening {
    let loop: EventLoop
    /// The proxy made `loop` (and shuts it down).
    let ownsLoop: Bool
    let listener: TCPListener

    init(loop: EventLoop?, name: String) throws(SocketError) {
        let chosen: EventLoop
        if let loop {
            chosen = loop
        } else {
            chosen = try EventLoop(name: name)
        }
        do throws(SocketError) {
            self.listener = try TCPListener.bind(host: "127.0.0.1", loop: chosen)
        } catch {
            if loop == nil { chosen.shutdown() }
            throw error
        }
        self.loop = chosen
        self.ownsLoop = loop == nil
    }
}
#endif
