import TetherWire

/// Everything the server saw and did on one connection. Times are integer milliseconds on a
/// monotonic clock since the server started.
public struct ConnectionRecord: Sendable {
    /// The connection's number, from 1 in order of acceptance.
    public let index: Int
    /// When the TCP connection was accepted.
    public var acceptedAt: Int
    /// The upgrade request, once read.
    public var request: RequestRecord?
    /// Over TLS, once the request was read: whether the client resumed a session (a ticket or session the server
    /// issued on an earlier connection) instead of a full handshake. Nil without TLS or before the request.
    public var tlsResumed: Bool?
    /// Over TLS with client certificates required, once the request was read: the subject of the certificate the
    /// client presented, in RFC 2253 form (for example `CN=device-7`). Nil otherwise.
    public var clientCertificateSubject: String?
    /// The scenario applied (once the request was read and valid).
    public var scenario: Scenario?
    /// How the handshake was answered, once it was.
    public var handshake: HandshakeOutcome?
    /// When the 101 response was sent.
    public var openedAt: Int?
    /// The permessage-deflate agreement the server answered with (nil: the connection is not compressed).
    public var compression: PerMessageDeflateParameters?
    /// Data messages received, in order: the first `recordLimit` kept, all counted (`messages.total`).
    public var messages: RecordList<MessageRecord>
    /// Data messages received, all counted (the same as `messages.total`).
    public var messageCount = 0
    /// Payload bytes of the data messages received.
    public var messageBytes = 0
    /// Data messages sent (stream and echo).
    public var sentMessageCount = 0
    /// Payload bytes of the data messages sent.
    public var sentMessageBytes = 0
    /// Pings received from the client, in order (the first `recordLimit` kept, all counted).
    public var pingsReceived: RecordList<ControlFrameRecord>
    /// Pongs sent in answer, in order (the first `recordLimit` kept, all counted).
    public var pongsSent: RecordList<ControlFrameRecord>
    /// Pings the server sent (`Scenario.pingIntervalMilliseconds`; the first `recordLimit` kept, all counted).
    public var pingsSent: RecordList<ControlFrameRecord>
    /// Pongs received from the client (the first `recordLimit` kept, all counted).
    public var pongsReceived: RecordList<ControlFrameRecord>
    /// The client's close frame.
    public var closeReceived: CloseRecord?
    /// The server's close frame (its own, a reply, or for a protocol error).
    public var closeSent: CloseRecord?
    /// How the connection ended, once it has.
    public var end: EndRecord?

    /// - Parameter recordLimit: how many records each list keeps (`TestServer`'s `recordLimit`).
    public init(index: Int, acceptedAt: Int, recordLimit: Int = 1_000) {
        self.index = index
        self.acceptedAt = acceptedAt
        self.messages = RecordList(limit: recordLimit)
        self.pingsReceived = RecordList(limit: recordLimit)
        self.pongsSent = RecordList(limit: recordLimit)
        self.pingsSent = RecordList(limit: recordLimit)
        self.pongsReceived = RecordList(limit: recordLimit)
    }

    /// The connection has ended and its socket is closed.
    public var hasEnded: Bool { self.end != nil }
}

/// The client's upgrade request.
public struct RequestRecord: Sendable, Equatable {
    /// When the request was complete.
    public var at: Int
    /// The request target (path and query). Never print it whole; `path` is safe.
    public var target: String
    /// Every header field in order; values never appear in descriptions.
    public var headers: [HeaderField]
    /// The subprotocols offered.
    public var subprotocols: [String]

    /// The target without query or fragment.
    public var path: String { pathOnly(self.target) }
    /// Header names in order.
    public var headerNames: [String] { self.headers.map(\.name) }
    /// The value of header `name` (ASCII case-insensitive); repeated fields are joined with `, `.
    public func header(_ name: String) -> String? { headerValue(name, in: self.headers) }
}

/// How the opening handshake was answered.
public enum HandshakeOutcome: Sendable, Equatable, CustomStringConvertible {
    /// 101, with the selected subprotocol.
    case accepted(subprotocol: String?)
    /// Rejected by the scenario with this status.
    case rejected(status: Int, retryAfterSeconds: Int?)
    /// The request was not a valid upgrade; answered 400. `reason` never holds header values.
    case invalid(reason: String)
    /// Never answered (`Scenario.Handshake.ignore`).
    case ignored

    public var description: String {
        switch self {
        case .accepted(let subprotocol): "accepted" + (subprotocol.map { " (subprotocol \($0))" } ?? "")
        case .rejected(let status, let retryAfter):
            "rejected \(status)" + (retryAfter.map { " retry-after \($0)" } ?? "")
        case .invalid(let reason): "bad upgrade (\(reason)), answered 400"
        case .ignored: "ignored"
        }
    }
}

/// One data message received.
public struct MessageRecord: Sendable, Equatable {
    /// When it was complete (ms since the server started).
    public var at: Int
    /// Text or binary.
    public var kind: Scenario.MessageKind
    /// Payload size in bytes.
    public var size: Int
    /// The payload, when the scenario records payloads.
    public var payload: [UInt8]?
}

/// One ping or pong.
public struct ControlFrameRecord: Sendable, Equatable {
    /// When it was received or handed to the socket (ms since the server started).
    public var at: Int
    /// The payload (at most 125 bytes).
    public var payload: [UInt8]
}

/// One close frame.
public struct CloseRecord: Sendable, Equatable {
    /// When it was received or handed to the socket (ms since the server started).
    public var at: Int
    /// The code, or nil for an empty close frame.
    public var code: UInt16?
    /// The UTF-8 reason (empty when none).
    public var reason: String
}

/// How and when a connection ended.
public struct EndRecord: Sendable, Equatable {
    /// When the socket was closed (ms since the server started).
    public var at: Int
    /// Why.
    public var reason: ConnectionEnd
}

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
    /// The scenario reset the TCP connection.
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
