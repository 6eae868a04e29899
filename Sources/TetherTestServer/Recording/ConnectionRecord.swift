import TetherWire

/// Everything the server saw and did on one connection. Times are integer milliseconds on a
/// monotonic clock since the server started.
public struct ConnectionRecord: Sendable {
    /// The connection's number, from 1 in order of acceptance.
    public let index: Int
    /// When the TCP connection was accepted.
    public var acceptedAt: Int
    /// The client's numeric address (its host, without the port), as the server's socket saw it: which of the
    /// client's links a connection came over. Nil when the system did not say.
    public var clientHost: String?
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
    public init(index: Int, acceptedAt: Int, clientHost: String? = nil, recordLimit: Int = 1_000) {
        self.index = index
        self.acceptedAt = acceptedAt
        self.clientHost = clientHost
        self.messages = RecordList(limit: recordLimit)
        self.pingsReceived = RecordList(limit: recordLimit)
        self.pongsSent = RecordList(limit: recordLimit)
        self.pingsSent = RecordList(limit: recordLimit)
        self.pongsReceived = RecordList(limit: recordLimit)
    }

    /// The connection has ended and its socket is closed.
    public var hasEnded: Bool { self.end != nil }
}
