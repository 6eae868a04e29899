/// The client side of the opening handshake (RFC 6455 §4.1): the upgrade request and the accept value the
/// server must answer with.
public struct ClientHandshake: Sendable {
    /// The full HTTP/1.1 upgrade request.
    public let request: [UInt8]
    /// The `Sec-WebSocket-Key` sent (base64 of the 16-byte key).
    public let secWebSocketKey: String
    /// The `Sec-WebSocket-Accept` value the server must return.
    public let expectedAccept: String
    /// The subprotocols offered, in order of preference.
    public let subprotocols: [String]
    /// The extension names offered in a `Sec-WebSocket-Extensions` header passed in `headers`.
    public let offeredExtensions: [String]

    /// Headers set by the handshake itself; passing them in `headers` is a usage error.
    static let reservedHeaders = [
        "host", "upgrade", "connection", "sec-websocket-key", "sec-websocket-version", "sec-websocket-protocol",
        "sec-websocket-accept", "content-length", "transfer-encoding",
    ]

    /// - Parameters:
    ///   - host: the host name or IP address (an IPv6 address is bracketed in `Host` automatically).
    ///   - port: the port, sent in `Host` only when it differs from the scheme's default (80, or 443 if `secure`).
    ///   - secure: whether the connection uses TLS (wss); decides the default port.
    ///   - target: the request target: path plus optional `?query`, starting with `/`, already percent-encoded.
    ///   - subprotocols: offered subprotocols, in order of preference (tokens, unique).
    ///   - headers: extra headers (for example `Authorization`, `Origin`, `Sec-WebSocket-Extensions`); headers the
    ///     handshake sets itself are rejected.
    ///   - key: 16 random bytes (use `randomKey(using:)`).
    public init(
        host: String,
        port: Int?,
        secure: Bool,
        target: String,
        subprotocols: [String] = [],
        headers: [(name: String, value: String)] = [],
        key: [UInt8]
    ) throws(WireUsageError) {
        guard key.count == 16 else { throw WireUsageError.invalidKeyLength(key.count) }
        guard !host.isEmpty, host.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && !"/?#@".utf8.contains($0) }) else {
            throw WireUsageError.invalidHandshakeField("host")
        }
        if let port, !(1...65535).contains(port) { throw WireUsageError.invalidHandshakeField("port") }
        guard target.utf8.first == UInt8(ascii: "/"), target.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw WireUsageError.invalidHandshakeField("target")
        }
        let offeredExtensions = try Self.checkOffer(subprotocols: subprotocols, headers: headers)

        var hostField = host
        if host.contains(":"), !host.hasPrefix("[") { hostField = "[\(host)]" }
        if let port, port != (secure ? 443 : 80) { hostField += ":\(port)" }

        self.secWebSocketKey = Base64.encode(key)
        self.expectedAccept = HTTPSyntax.acceptValue(forKey: self.secWebSocketKey)
        self.subprotocols = subprotocols
        self.offeredExtensions = offeredExtensions

        var text = "GET \(target) HTTP/1.1\r\n"
        text += "Host: \(hostField)\r\n"
        text += "Upgrade: websocket\r\n"
        text += "Connection: Upgrade\r\n"
        text += "Sec-WebSocket-Key: \(self.secWebSocketKey)\r\n"
        text += "Sec-WebSocket-Version: 13\r\n"
        if !subprotocols.isEmpty {
            text += "Sec-WebSocket-Protocol: \(subprotocols.joined(separator: ", "))\r\n"
        }
        for header in headers {
            text += "\(header.name): \(header.value)\r\n"
        }
        text += "\r\n"
        self.request = Array(text.utf8)
    }

    /// Checks `subprotocols` and `headers` as `init` does, before any host or key is known, so that a client
    /// can refuse a bad configuration up front. Subprotocols must be distinct HTTP tokens; header names HTTP
    /// tokens that the handshake does not set itself; header values free of control characters but HTAB.
    /// - Returns: the extension names offered in a `Sec-WebSocket-Extensions` header.
    /// - Throws: `.invalidHandshakeField` naming the field (never its value) or `.reservedHeader`.
    @discardableResult
    public static func checkOffer(
        subprotocols: [String], headers: [(name: String, value: String)]
    ) throws(WireUsageError) -> [String] {
        var seen = Set<String>()
        for subprotocol in subprotocols {
            guard HTTPSyntax.isToken(subprotocol), seen.insert(subprotocol).inserted else {
                throw WireUsageError.invalidHandshakeField("subprotocols")
            }
        }
        var offeredExtensions: [String] = []
        for header in headers {
            guard HTTPSyntax.isToken(header.name) else { throw WireUsageError.invalidHandshakeField("header name") }
            let lowercasedName = String(decoding: header.name.utf8.map(HTTPSyntax.lowercased), as: UTF8.self)
            guard !Self.reservedHeaders.contains(lowercasedName) else {
                throw WireUsageError.reservedHeader(header.name)
            }
            guard HTTPSyntax.isSendableValue(header.value) else {
                throw WireUsageError.invalidHandshakeField("value of header \(header.name)")
            }
            if lowercasedName == "sec-websocket-extensions" {
                offeredExtensions += HTTPSyntax.splitList(header.value).map(HTTPSyntax.extensionName)
            }
        }
        return offeredExtensions
    }

    /// 16 bytes for `Sec-WebSocket-Key` from `random` (production: `SystemRandomNumberGenerator`).
    public static func randomKey(using random: inout some RandomNumberGenerator) -> [UInt8] {
        var key: [UInt8] = []
        key.reserveCapacity(16)
        for _ in 0..<2 {
            let word = random.next() as UInt64
            for shift in stride(from: 0, to: 64, by: 8) {
                key.append(UInt8(truncatingIfNeeded: word >> UInt64(shift)))
            }
        }
        return key
    }
}
