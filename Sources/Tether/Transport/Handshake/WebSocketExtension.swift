import TetherWire

/// One extension a server agreed to in its opening handshake (`Sec-WebSocket-Extensions`, RFC 6455 §9.1): its name
/// and parameters, as the server sent them (names lowercased, quoted values unquoted).
public struct WebSocketExtension: Equatable, Hashable, Sendable, CustomStringConvertible {
    /// One parameter: its name, and its value if it has one (`client_max_window_bits=10`,
    /// `server_no_context_takeover`).
    public struct Parameter: Equatable, Hashable, Sendable {
        public var name: String
        public var value: String?

        public init(name: String, value: String? = nil) {
            self.name = name
            self.value = value
        }
    }

    /// The extension's name, for example `permessage-deflate`.
    public var name: String
    /// Its parameters, in the order the server sent them.
    public var parameters: [Parameter]

    public init(name: String, parameters: [Parameter] = []) {
        self.name = name
        self.parameters = parameters
    }

    /// The element as it is sent: `permessage-deflate; server_no_context_takeover; client_max_window_bits=10`.
    public var description: String {
        self.element.headerText
    }

    /// The element as the wire codec reads it.
    init(_ element: ExtensionElement) {
        self.init(name: element.name, parameters: element.parameters.map { Parameter(name: $0.name, value: $0.value) })
    }

    private var element: ExtensionElement {
        ExtensionElement(name: self.name, parameters: self.parameters.map { (name: $0.name, value: $0.value) })
    }
}
