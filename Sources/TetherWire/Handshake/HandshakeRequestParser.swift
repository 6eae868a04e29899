/// A client's valid WebSocket upgrade request, as read by the server.
public struct HandshakeRequest: Sendable {
    /// The request method (always `GET` for a valid upgrade).
    public var method: String
    /// The request target: path plus optional `?query`.
    public var target: String
    /// Every header field in order, names as received.
    public var headers: [(name: String, value: String)]
    /// The `Sec-WebSocket-Key` value (base64 of 16 bytes).
    public var key: String
    /// The subprotocols offered, in the client's order of preference.
    public var subprotocols: [String]
    /// Bytes received after the header block: the first WebSocket frames. Feed them to the decoder.
    public var remaining: [UInt8]

    public init(
        method: String, target: String, headers: [(name: String, value: String)], key: String,
        subprotocols: [String], remaining: [UInt8]
    ) {
        self.method = method
        self.target = target
        self.headers = headers
        self.key = key
        self.subprotocols = subprotocols
        self.remaining = remaining
    }

    /// The elements of every `Sec-WebSocket-Extensions` field, in order (each an extension with its parameters).
    public var extensionElements: [String] {
        self.headers.filter { HTTPSyntax.equalsIgnoringCase($0.name, "Sec-WebSocket-Extensions") }
            .flatMap { HTTPSyntax.splitList($0.value) }
    }

    /// The value of header `name` (case-insensitive); repeated fields are joined with `, ` (RFC 9110 §5.3).
    public func header(_ name: String) -> String? {
        let values = self.headers.filter { HTTPSyntax.equalsIgnoringCase($0.name, name) }.map(\.value)
        return values.isEmpty ? nil : values.joined(separator: ", ")
    }
}

/// Incrementally reads and validates a client's upgrade request (server side, RFC 6455 §4.2.1).
///
/// Append bytes as they arrive and call `parse()` until it returns a request or throws. Bytes after the header
/// block are kept in `HandshakeRequest.remaining`. A failed handshake throws on every later call; answer it
/// with `ServerHandshake.reject(status:reason:)` (400, or 426 for a wrong version).
public struct HandshakeRequestParser: Sendable {
    private var parsing: HandshakeParsing

    /// - Parameter maximumHeaderSize: the largest header block accepted (default 16 KiB), guarding memory against
    ///   a client that never ends its headers.
    public init(maximumHeaderSize: Int = 16 << 10) {
        self.parsing = HandshakeParsing(limit: maximumHeaderSize)
    }

    /// Appends bytes received from the client.
    public mutating func append(_ bytes: some Sequence<UInt8>) {
        self.parsing.append(bytes)
    }

    /// Appends bytes received from the client.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        self.parsing.append(bytes)
    }

    /// Returns the validated request, nil when more bytes are needed, or throws why it is not a valid upgrade.
    public mutating func parse() throws(HandshakeError) -> HandshakeRequest? {
        try self.parsing.parse(Self.validate)
    }

    private static func validate(_ head: HTTPHead, remaining: [UInt8]) throws(HandshakeError) -> HandshakeRequest {
        let parts = head.startLine.split(separator: 0x20, omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].allSatisfy(HTTPSyntax.isTokenCharacter), !parts[0].isEmpty,
            !parts[1].isEmpty, parts[1].allSatisfy({ $0 > 0x20 && $0 < 0x7F })
        else {
            throw HandshakeError.malformed("invalid request line")
        }
        // "HTTP/" DIGIT "." DIGIT
        let version = Array(parts[2])
        let isDigit = { (byte: UInt8) in (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
        guard version.count == 8, version.starts(with: Array("HTTP/".utf8)), isDigit(version[5]),
            version[6] == UInt8(ascii: "."), isDigit(version[7])
        else {
            throw HandshakeError.malformed("invalid HTTP version")
        }
        guard version[5] == UInt8(ascii: "1"), version[7] >= UInt8(ascii: "1") else {
            throw HandshakeError.invalidUpgrade("HTTP version must be 1.1")
        }
        let method = String(decoding: parts[0], as: UTF8.self)
        guard method == "GET" else { throw HandshakeError.invalidUpgrade("method must be GET") }
        guard head.values("Host").count == 1 else { throw HandshakeError.invalidUpgrade("Host missing or repeated") }
        guard HTTPSyntax.listContains(head.listElements("Upgrade"), "websocket") else {
            throw HandshakeError.invalidUpgrade("Upgrade header missing or not websocket")
        }
        guard HTTPSyntax.listContains(head.listElements("Connection"), "upgrade") else {
            throw HandshakeError.invalidUpgrade("Connection header missing or without upgrade")
        }
        guard head.values("Sec-WebSocket-Version") == ["13"] else {
            throw HandshakeError.invalidUpgrade("Sec-WebSocket-Version must be 13")
        }
        let keys = head.values("Sec-WebSocket-Key")
        guard keys.count == 1, let key = keys.first, Base64.decode(key)?.count == 16 else {
            throw HandshakeError.invalidUpgrade("Sec-WebSocket-Key missing or not 16 bytes in base64")
        }
        let subprotocols = head.listElements("Sec-WebSocket-Protocol")
        guard subprotocols.allSatisfy(HTTPSyntax.isToken) else {
            throw HandshakeError.malformed("invalid subprotocol token")
        }
        return HandshakeRequest(
            method: method,
            target: String(decoding: parts[1], as: UTF8.self),
            headers: head.headers.map { (name: $0.name, value: $0.value) },
            key: key,
            subprotocols: subprotocols,
            remaining: remaining
        )
    }
}
