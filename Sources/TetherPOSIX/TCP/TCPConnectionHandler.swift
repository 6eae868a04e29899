#if os(Linux)
/// Receives what happens on a `TCPConnection`. Every method is called on the connection's event
/// loop thread, so an implementation can keep its state there without locks; it is never called
/// re-entrantly from inside the owner's own `write`, `close`, `reset` or `shutdownOutput` call.
package protocol TCPConnectionHandler: AnyObject {
    /// Bytes read from the peer, in order. `bytes` is borrowed from the loop's reused read buffer
    /// and is valid only during this call: copy or parse what you need before returning.
    func received(_ bytes: UnsafeRawBufferPointer, on connection: TCPConnection)

    /// Called exactly once, as the last call for this connection. The descriptor is closed (or is
    /// being closed after pending writes drain), and later writes fail with `SocketError.closed`.
    /// The connection releases its handler after this call.
    func ended(_ end: TCPConnection.End, on connection: TCPConnection)
}
#endif
