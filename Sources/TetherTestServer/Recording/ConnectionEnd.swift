/// Why a connection ended.
public enum ConnectionEnd: Sendable, Equatable, CustomStringConvertible {
    /// Close frames went both ways and the server closed the TCP connection.
    case closeHandshakeCompleted(initiatedByServer: Bool)
    /// The server sent its close frame and the client did not answer within the close timeout;
    /// the server reset the connection.
    case closeTimedOut
    /// The client closed TCP (end of stream) without a closing handshake.
    case peerClosedWithoutCloseFrame
    /// The client reset the TCP connection.
    case peerReset
    /// The scenario, or `TestServer.reset(connection:)`, reset the TCP connection.
    case serverReset
    /// The client broke the protocol; the server sent a close frame with this code and closed.
    case protocolError(code: UInt16)
    /// The handshake was rejected (by the scenario or as a bad upgrade) and TCP closed.
    case handshakeRejected(status: Int)
    /// The upgrade request was not complete within the server's `handshakeTimeout`; TCP closed.
    case handshakeTimedOut
    /// Still in the handshake (no complete upgrade request yet), the connection was reset to serve a
    /// newer one: `maximumHandshakingConnections` were in the handshake, or the server ran out of
    /// descriptors.
    case handshakeDropped
    /// `TestServer.stop()` reset the connection.
    case serverStopped
    /// Another socket error.
    case socketError(String)
    /// TLS failed (the handshake, or a record); a fixed text such as "handshake failed: tlsv1 alert unknown ca".
    case tlsFailed(String)

    public var description: String {
        switch self {
        case .closeHandshakeCompleted(let byServer):
            "close handshake completed (initiated by \(byServer ? "server" : "client"))"
        case .closeTimedOut: "no close reply in time, reset"
        case .peerClosedWithoutCloseFrame: "client closed TCP without a close frame"
        case .peerReset: "client reset the connection"
        case .serverReset: "reset by scenario"
        case .protocolError(let code): "protocol error, closed with \(code)"
        case .handshakeRejected(let status): "handshake rejected with \(status)"
        case .handshakeTimedOut: "no complete upgrade request in time, closed"
        case .handshakeDropped: "reset in the handshake to serve a newer connection"
        case .serverStopped: "server stopped"
        case .socketError(let error): "socket error: \(error)"
        case .tlsFailed(let detail): "TLS failed: \(detail)"
        }
    }
}
