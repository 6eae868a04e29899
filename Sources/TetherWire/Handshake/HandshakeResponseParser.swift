/// The server's answer to a successful upgrade.
public struct HandshakeResponse: Equatable, Sendable {
    /// The subprotocol the server selected (one of those offered), or nil.
    public var subprotocol: String?
    /// The `Sec-WebSocket-Extensions` elements the server accepted, with their parameters.
    public var extensions: [String]
    /// The response headers the parser was asked to keep (`HandshakeResponseParser`'s `keepingHeaders`), in the
    /// order the server sent them, names as sent; no other header is kept.
    public var headers: [(name: String, value: String)]
    /// Bytes received after the header block: the first WebSocket frames. Feed them to the decoder.
    public var remaining: [UInt8]

    public init(
        subprotocol: String?, extensions: [String], headers: [(name: String, value: String)] = [], remaining: [UInt8]
    ) {
        self.subprotocol = subprotocol
        self.extensions = extensions
        self.headers = headers
        self.remaining = remaining
    }

    public static func == (lhs: HandshakeResponse, rhs: HandshakeResponse) -> Bool {
        lhs.subprotocol == rhs.subprotocol && lhs.extensions == rhs.extensions && lhs.remaining == rhs.remaining
            && lhs.headers.count == rhs.headers.count
            && zip(lhs.headers, rhs.headers).allSatisfy { $0.name == $1.name && $0.value == $1.value }
    }
}

/// Incrementally reads and validates the server's handshake response (client side, RFC 6455 §4.1).
///
/// Append bytes as they arrive and call `parse()` until it returns a response or throws. Bytes after the header
/// block are kept in `HandshakeResponse.remaining`. A failed handshake throws on every later call.
public struct HandshakeResponseParser: Sendable {
    /// The request this parser validates the response against.
    public let handshake: ClientHandshake
    /// The names of the response headers to keep (case-insensitive).
    public let keptHeaders: [String]
    private var parsing: HandshakeParsing

    /// - Parameters:
    ///   - handshake: the request that was sent (for the accept value and what was offered).
    ///   - maximumHeaderSize: the largest header block accepted (default 16 KiB), guarding memory against a
    ///     server that never ends its headers.
    ///   - keepingHeaders: the names of the response headers to return in `HandshakeResponse.headers`
    ///     (case-insensitive; default none): what the application asked for, and nothing else.
    public init(handshake: ClientHandshake, maximumHeaderSize: Int = 16 << 10, keepingHeaders: [String] = []) {
        self.handshake = handshake
        self.keptHeaders = keepingHeaders
        self.parsing = HandshakeParsing(limit: maximumHeaderSize)
    }

    /// Appends bytes received from the server.
    public mutating func append(_ bytes: some Sequence<UInt8>) {
        self.parsing.append(bytes)
    }

    /// Appends bytes received from the server.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        self.parsing.append(bytes)
    }

    /// Returns the validated response, nil when more bytes are needed, or throws why the handshake failed.
    public mutating func parse() throws(HandshakeError) -> HandshakeResponse? {
        let handshake = self.handshake
        let kept = self.keptHeaders
        return try self.parsing.parse { head, remaining throws(HandshakeError) in
            var response = try Self.validate(head, remaining: remaining, against: handshake)
            if !kept.isEmpty {
                response.headers = head.headers
                    .filter { header in kept.contains { HTTPSyntax.equalsIgnoringCase($0, header.name) } }
                    .map { (name: $0.name, value: $0.value) }
            }
            return response
        }
    }

    private static func validate(
        _ head: HTTPHead, remaining: [UInt8], against handshake: ClientHandshake
    ) throws(HandshakeError) -> HandshakeResponse {
        let status = try Self.parseStatusLine(head.startLine)
        if Self.redirectStatuses.contains(status.code) {
            let locations = head.values("Location")
            throw HandshakeError.redirected(status: status.code, location: locations.count == 1 ? locations[0] : nil)
        }
        guard status.code == 101 else {
            throw HandshakeError.rejected(status: status.code, retryAfter: Self.retryAfter(head))
        }
        guard status.minorVersion >= 1 else { throw HandshakeError.invalidUpgrade("HTTP version below 1.1") }
        guard HTTPSyntax.listContains(head.listElements("Upgrade"), "websocket") else {
            throw HandshakeError.invalidUpgrade("Upgrade header missing or not websocket")
        }
        guard HTTPSyntax.listContains(head.listElements("Connection"), "upgrade") else {
            throw HandshakeError.invalidUpgrade("Connection header missing or without upgrade")
        }
        let accepts = head.values("Sec-WebSocket-Accept")
        guard accepts.count == 1 else {
            throw HandshakeError.invalidUpgrade(
                accepts.isEmpty ? "Sec-WebSocket-Accept missing" : "Sec-WebSocket-Accept repeated")
        }
        guard accepts[0] == handshake.expectedAccept else {
            throw HandshakeError.invalidUpgrade("Sec-WebSocket-Accept does not match the key")
        }
        let protocols = head.listElements("Sec-WebSocket-Protocol")
        guard protocols.count <= 1 else { throw HandshakeError.invalidUpgrade("more than one subprotocol selected") }
        if let selected = protocols.first, !handshake.subprotocols.contains(selected) {
            throw HandshakeError.invalidUpgrade("subprotocol not offered")
        }
        let extensions = head.listElements("Sec-WebSocket-Extensions")
        for element in extensions {
            let name = HTTPSyntax.extensionName(element)
            guard HTTPSyntax.listContains(handshake.offeredExtensions, name) else {
                throw HandshakeError.invalidUpgrade("extension not offered")
            }
        }
        return HandshakeResponse(
            subprotocol: protocols.first, extensions: extensions, remaining: remaining)
    }

    /// The statuses that redirect a request to the URL in `Location` (RFC 9110 §15.4): 301, 302, 303, 307, 308. 300
    /// (a choice), 304 (not modified) and 305/306 (unused) are not redirects a client follows.
    static let redirectStatuses: Set<Int> = [301, 302, 303, 307, 308]

    /// Parses `HTTP/1.x SP 3DIGIT [SP reason]`.
    static func parseStatusLine(_ line: [UInt8]) throws(HandshakeError) -> (code: Int, minorVersion: Int) {
        let prefix = Array("HTTP/1.".utf8)
        guard line.count >= 12, line.starts(with: prefix),
            let minor = line[7...].first, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(minor),
            line[8] == 0x20
        else {
            throw HandshakeError.malformed("invalid status line")
        }
        let digits = line[9..<12]
        guard digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
            line.count == 12 || line[12] == 0x20
        else {
            throw HandshakeError.malformed("invalid status code")
        }
        let code = digits.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
        guard code >= 100 else { throw HandshakeError.malformed("invalid status code") }
        return (code, Int(minor - UInt8(ascii: "0")))
    }

    /// `Retry-After` (RFC 9110 §10.2.3) read against the response's `Date`, or nil (absent, repeated, invalid).
    static func retryAfter(_ head: HTTPHead) -> RetryAfter? {
        let values = head.values("Retry-After")
        guard values.count == 1 else { return nil }
        let dates = head.values("Date")
        return RetryAfter(values[0], responseDate: dates.count == 1 ? dates[0] : nil)
    }
}
