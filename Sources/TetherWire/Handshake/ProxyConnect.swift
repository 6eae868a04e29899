/// The HTTP CONNECT exchange that opens a tunnel through a proxy (RFC 9110 §9.3.6): the request, and the parser of
/// the proxy's answer. A 2xx answer opens the tunnel; any other status refuses it.
public enum ProxyConnect {
    /// `CONNECT host:port HTTP/1.1` with its `Host` field and, given credentials, `Proxy-Authorization: Basic`.
    /// - Parameters:
    ///   - host: the origin's host name or IP literal (an IPv6 literal without brackets).
    ///   - credentials: the user name and password for Basic authentication (sent, never logged by Tether).
    public static func request(host: String, port: Int, credentials: (user: String, password: String)?) -> [UInt8] {
        let authority = (host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host) + ":\(port)"
        var text = "CONNECT \(authority) HTTP/1.1\r\nHost: \(authority)\r\n"
        if let credentials {
            let token = Base64.encode(Array("\(credentials.user):\(credentials.password)".utf8))
            text += "Proxy-Authorization: Basic \(token)\r\n"
        }
        text += "\r\n"
        return Array(text.utf8)
    }
}

/// The proxy's answer to CONNECT.
public struct ProxyConnectResponse: Equatable, Sendable {
    /// The status code; 2xx opened the tunnel.
    public var status: Int
    /// The `Retry-After` field of a refusal, when it had exactly one valid value.
    public var retryAfter: RetryAfter?
    /// Bytes after the header block: already the origin's (a proxy should send none before the client speaks).
    public var remaining: [UInt8]

    /// Whether the tunnel is open.
    public var opensTunnel: Bool { (200..<300).contains(self.status) }
}

/// Parses the proxy's answer to CONNECT, for any split of the input. A malformed head throws; any status parses.
public struct ProxyConnectResponseParser: Sendable {
    private var parsing: HandshakeParsing

    /// - Parameter maximumHeaderSize: the largest header block accepted (default 16 KiB).
    public init(maximumHeaderSize: Int = 16 << 10) {
        self.parsing = HandshakeParsing(limit: maximumHeaderSize)
    }

    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        self.parsing.append(bytes)
    }

    public mutating func append(_ bytes: some Sequence<UInt8>) {
        self.parsing.append(bytes)
    }

    /// The answer, nil while more bytes are needed.
    /// - Throws: `HandshakeError.malformed` or `.headerTooLarge`.
    public mutating func parse() throws(HandshakeError) -> ProxyConnectResponse? {
        try self.parsing.parse { head, remaining throws(HandshakeError) in
            let status = try HandshakeResponseParser.parseStatusLine(head.startLine)
            return ProxyConnectResponse(
                status: status.code, retryAfter: HandshakeResponseParser.retryAfter(head), remaining: remaining)
        }
    }
}
