/// One header field of a client's upgrade request. Its `description` shows the name only: values
/// may hold credentials, so they are available to tests but never printed.
public struct HeaderField: Sendable, Equatable, CustomStringConvertible {
    /// The name as received.
    public var name: String
    /// The value, trimmed. Never print it.
    public var value: String

    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }

    public var description: String { "\(self.name): <\(self.value.utf8.count) bytes>" }
}

/// What the server knows about a connection when it picks its scenario: the upgrade request.
public struct ConnectionContext: Sendable {
    /// The connection's number, from 1 in order of acceptance.
    public var index: Int
    /// The request target: path plus optional `?query`. Never print it whole (the query may hold a token).
    public var target: String
    /// Every header field in order, names as received.
    public var headers: [HeaderField]
    /// The subprotocols the client offered, in its order of preference.
    public var subprotocols: [String]

    public init(index: Int, target: String, headers: [HeaderField], subprotocols: [String]) {
        self.index = index
        self.target = target
        self.headers = headers
        self.subprotocols = subprotocols
    }

    /// The target without query or fragment, safe to print.
    public var path: String { pathOnly(self.target) }

    /// The value of header `name` (ASCII case-insensitive); repeated fields are joined with `, `.
    public func header(_ name: String) -> String? {
        headerValue(name, in: self.headers)
    }
}

func pathOnly(_ target: String) -> String {
    String(target.prefix { $0 != "?" && $0 != "#" })
}

func headerValue(_ name: String, in headers: [HeaderField]) -> String? {
    let lowered = name.lowercased()
    let values = headers.filter { $0.name.lowercased() == lowered }.map(\.value)
    return values.isEmpty ? nil : values.joined(separator: ", ")
}
