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
