import TetherWire

/// What the opening handshake of a connection agreed: the subprotocol, the extensions (permessage-deflate and its
/// windows), and the response headers the app asked for by name. A transport reports it with `.opened`; the app
/// reads it as `ConnectionState.handshake` while the session is open.
///
/// The headers may hold secrets (a session cookie): they are kept only when named in
/// `WebSocketConfiguration.responseHeaderNames`, and a description, a debug description or a mirror of this value
/// names them without their values.
public struct HandshakeResult: Equatable, Sendable {
    /// The subprotocol the server chose among those offered (`WebSocketConfiguration.subprotocols`); nil when it
    /// chose none.
    public var subprotocol: String?
    /// The extensions the server agreed to, in the order it listed them, with their parameters as sent.
    public var extensions: [WebSocketExtension]
    /// permessage-deflate as agreed (RFC 7692): whether each side resets its context after every message, and the
    /// window each side compresses with; nil when compression was not agreed.
    public var compression: PerMessageDeflateParameters?
    /// The response headers named in `WebSocketConfiguration.responseHeaderNames` (`TransportRequest
    /// .responseHeaderNames`), as the server sent them, in its order (a header sent twice is here twice). No other
    /// header is kept.
    public var headers: [(name: String, value: String)]

    public init(
        subprotocol: String? = nil, extensions: [WebSocketExtension] = [],
        compression: PerMessageDeflateParameters? = nil, headers: [(name: String, value: String)] = []
    ) {
        self.subprotocol = subprotocol
        self.extensions = extensions
        self.compression = compression
        self.headers = headers
    }

    /// The values of the kept response header `name` (ASCII case-insensitive), in the order the server sent them;
    /// empty when it sent none, or the name was not asked for.
    public func values(ofHeader name: String) -> [String] {
        self.headers.filter { $0.name.lowercased() == name.lowercased() }.map(\.value)
    }

    public static func == (lhs: HandshakeResult, rhs: HandshakeResult) -> Bool {
        lhs.subprotocol == rhs.subprotocol && lhs.extensions == rhs.extensions && lhs.compression == rhs.compression
            && lhs.headers.count == rhs.headers.count
            && zip(lhs.headers, rhs.headers).allSatisfy { $0.name == $1.name && $0.value == $1.value }
    }
}

extension HandshakeResult: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// `subprotocol chat.v2, extensions [permessage-deflate; client_max_window_bits=10], headers [set-cookie]`:
    /// header names only, never their values.
    public var description: String {
        let extensions = self.extensions.map(\.description).joined(separator: ", ")
        return "subprotocol \(self.subprotocol ?? "none"), extensions [\(extensions)], headers ["
            + self.headers.map(\.name).joined(separator: ", ") + "]"
    }

    public var debugDescription: String { self.description }

    /// The headers by name, their values redacted: `dump` and `String(reflecting:)` show none.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "subprotocol": self.subprotocol as Any, "extensions": self.extensions,
                "compression": self.compression as Any, "headers": redactedHeaders(self.headers),
            ],
            displayStyle: .struct)
    }
}

extension HandshakeResult {
    /// What a handshake agreed, from a transport that sees the server's response: the subprotocol, the
    /// `Sec-WebSocket-Extensions` elements with permessage-deflate's agreement (`compression` when the transport
    /// worked it out against its own offers, else read from the answer alone), and the headers kept.
    init(
        subprotocol: String?, extensionElements: [String], compression: PerMessageDeflateParameters?,
        headers: [(name: String, value: String)]
    ) {
        self.init(
            subprotocol: subprotocol,
            extensions: extensionElements.compactMap { try? ExtensionElement(parsing: $0) }
                .map(WebSocketExtension.init),
            compression: compression ?? PerMessageDeflate.agreement(in: extensionElements), headers: headers)
    }
}
