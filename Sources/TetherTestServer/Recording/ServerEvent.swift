/// One thing that happened on a connection, as a line for a console (`tether serve`). Descriptions
/// never include header values, a query string or a message body.
public struct ServerEvent: Sendable, Equatable, CustomStringConvertible {
    /// What happened.
    public enum Kind: Sendable, Equatable {
        /// TCP connection accepted.
        case connected
        /// The upgrade request was read; `path` has no query. `clientCertificate`: the subject of the client
        /// certificate the server required and accepted (mutual TLS), if any.
        case request(path: String, headerCount: Int, clientCertificate: String? = nil)
        /// 101 sent, with the selected subprotocol and the `Sec-WebSocket-Extensions` answer (permessage-deflate's
        /// agreement), if any.
        case opened(subprotocol: String?, extensions: String? = nil)
        /// The scenario rejected the handshake.
        case rejected(status: Int, retryAfterSeconds: Int?)
        /// The scenario redirected the handshake.
        case redirected(status: Int)
        /// Not a valid upgrade; answered 400.
        case badUpgrade(reason: String)
        /// The request was recorded and will never be answered.
        case handshakeIgnored
        /// A data message received (size only).
        case message(Scenario.MessageKind, bytes: Int)
        /// A client ping.
        case pingReceived(bytes: Int)
        /// A pong answering a client ping.
        case pongSent(bytes: Int)
        /// A server ping (`Scenario.pingIntervalMilliseconds`).
        case pingSent(bytes: Int)
        /// A client pong.
        case pongReceived(bytes: Int)
        /// The client's close frame; nil for an empty one.
        case closeReceived(code: UInt16?)
        /// The server's close frame; nil for an empty one.
        case closeSent(code: UInt16?)
        /// The scenario's message stream is fully handed to the socket.
        case streamFinished(count: Int)
        /// More than the outbound high watermark waits for the client (`queuedBytes`): the server stopped reading it.
        case readingPaused(queuedBytes: Int)
        /// What waited for the client is down to the low watermark: the server reads it again.
        case readingResumed
        /// A `send` of the delivery protocol: taken, or a `repeated` id (not taken again); acknowledged unless the
        /// scenario says not to.
        case sendReceived(id: String, repeated: Bool)
        /// A `subscribe` of the delivery protocol, resuming after `after` (nil: from now on).
        case subscribed(stream: String, after: UInt64?)
        /// The socket is closed; the last event of a connection.
        case ended(ConnectionEnd)
    }

    /// The connection's number (from 1).
    public var connection: Int
    /// Milliseconds since the server started.
    public var at: Int
    public var kind: Kind

    public init(connection: Int, at: Int, kind: Kind) {
        self.connection = connection
        self.at = at
        self.kind = kind
    }

    /// For example `conn 3 ping 8 bytes` or `conn 3 close sent 1001`.
    public var description: String {
        let detail: String =
            switch self.kind {
            case .connected: "connected"
            case .request(let path, let headerCount, let subject):
                "request \(path) (\(headerCount) headers)" + (subject.map { ", client certificate \($0)" } ?? "")
            case .opened(let subprotocol, let extensions):
                "opened" + (subprotocol.map { " subprotocol \($0)" } ?? "") + (extensions.map { " with \($0)" } ?? "")
            case .rejected(let status, let retryAfter):
                "rejected \(status)" + (retryAfter.map { " retry-after \($0) s" } ?? "")
            case .redirected(let status): "redirected \(status)"
            case .badUpgrade(let reason): "bad upgrade (\(reason)), answered 400"
            case .handshakeIgnored: "handshake ignored"
            case .message(let kind, let bytes): "\(kind) \(bytes) bytes"
            case .pingReceived(let bytes): "ping \(bytes) bytes"
            case .pongSent(let bytes): "pong sent \(bytes) bytes"
            case .pingSent(let bytes): "ping sent \(bytes) bytes"
            case .pongReceived(let bytes): "pong \(bytes) bytes"
            case .closeReceived(let code): "close received \(code.map(String.init) ?? "(no code)")"
            case .closeSent(let code): "close sent \(code.map(String.init) ?? "(no code)")"
            case .streamFinished(let count): "sent \(count) messages"
            case .readingPaused(let queued): "reading paused: \(queued) bytes wait for the client"
            case .readingResumed: "reading resumed"
            case .sendReceived(let id, let repeated): "send \(id)" + (repeated ? " (a repeat: not taken again)" : "")
            case .subscribed(let stream, let after):
                "subscribe \(stream)" + (after.map { " after \($0)" } ?? " from now on")
            case .ended(let end): "ended: \(end)"
            }
        return "conn \(self.connection) \(detail)"
    }
}
