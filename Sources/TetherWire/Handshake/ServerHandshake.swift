/// Builds the server's handshake responses (RFC 6455 §4.2.2).
public enum ServerHandshake {
    /// The `101 Switching Protocols` response accepting `request`.
    ///
    /// - Parameters:
    ///   - subprotocol: the selected subprotocol; should be one of `request.subprotocols` (not checked, so that a
    ///     test server can misbehave on purpose). Must be a token.
    ///   - headers: extra response headers (for example `Sec-WebSocket-Extensions`); values with CR or LF are
    ///     dropped.
    public static func accept(
        _ request: HandshakeRequest,
        subprotocol: String? = nil,
        headers: [(name: String, value: String)] = []
    ) -> [UInt8] {
        var text = "HTTP/1.1 101 Switching Protocols\r\n"
        text += "Upgrade: websocket\r\n"
        text += "Connection: Upgrade\r\n"
        text += "Sec-WebSocket-Accept: \(HTTPSyntax.acceptValue(forKey: request.key))\r\n"
        if let subprotocol {
            precondition(HTTPSyntax.isToken(subprotocol), "a subprotocol must be an HTTP token")
            text += "Sec-WebSocket-Protocol: \(subprotocol)\r\n"
        }
        for header in headers where HTTPSyntax.isToken(header.name) && HTTPSyntax.isSendableValue(header.value) {
            text += "\(header.name): \(header.value)\r\n"
        }
        text += "\r\n"
        return Array(text.utf8)
    }

    /// A refusal: `status` (for example 400, 401, 403, 426, 429, 503) with `Connection: close`, an empty body and
    /// `Retry-After` when given (a 426 also carries `Sec-WebSocket-Version: 13`). Control characters in
    /// `reason` are replaced by spaces.
    public static func reject(status: Int, reason: String, retryAfterSeconds: Int? = nil) -> [UInt8] {
        self.reject(status: status, reason: reason, retryAfterSeconds: retryAfterSeconds, headers: [])
    }

    /// `reject(status:reason:retryAfterSeconds:)` with extra headers; values with CR or LF are dropped.
    public static func reject(
        status: Int,
        reason: String,
        retryAfterSeconds: Int?,
        headers: [(name: String, value: String)]
    ) -> [UInt8] {
        precondition((100...999).contains(status), "an HTTP status has three digits")
        let safeReason = String(decoding: reason.utf8.map { $0 < 0x20 || $0 == 0x7F ? 0x20 : $0 }, as: UTF8.self)
        var text = "HTTP/1.1 \(status) \(safeReason)\r\n"
        text += "Connection: close\r\n"
        text += "Content-Length: 0\r\n"
        if let retryAfterSeconds {
            text += "Retry-After: \(max(0, retryAfterSeconds))\r\n"
        }
        if status == 426 {
            text += "Sec-WebSocket-Version: 13\r\n"
        }
        for header in headers where HTTPSyntax.isToken(header.name) && HTTPSyntax.isSendableValue(header.value) {
            text += "\(header.name): \(header.value)\r\n"
        }
        text += "\r\n"
        return Array(text.utf8)
    }
}
