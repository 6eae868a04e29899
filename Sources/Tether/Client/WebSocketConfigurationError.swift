/// A configuration the client cannot run with: `WebSocketClient.init` and `WebSocketConfiguration.validate()`
/// throw it, naming the first property out of range.
public struct WebSocketConfigurationError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The property as spelled in `WebSocketConfiguration`, for example `heartbeatTimeout` or `backoff.factor`.
    public let property: String
    /// What it must be, for example "at least 1 ms".
    public let requirement: String
    /// The value it had, for example "0 ms"; for a header, only its name (a header value may be a credential).
    public let value: String

    public init(property: String, requirement: String, value: String) {
        self.property = property
        self.requirement = requirement
        self.value = value
    }

    public var description: String {
        "invalid WebSocketConfiguration.\(self.property): \(self.value); it must be \(self.requirement)"
    }
}
