/// Why a test server call failed.
public enum TestServerError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The listening socket could not be created; why, as the system said it (for example "address already in use"
    /// for a taken port).
    case listen(String)
    /// A scenario value is out of range; names the field.
    case invalidScenario(String)
    /// An initializer argument is out of range; names it and its range.
    case invalidArgument(String)
    /// A wait's condition did not hold within its timeout.
    case timedOut(Duration)
    /// The waiting task was cancelled.
    case cancelled
    /// The server stopped before the wait's condition held.
    case stopped

    public var description: String {
        switch self {
        case .listen(let error): "test server cannot listen: \(error)"
        case .invalidScenario(let field): "invalid scenario: \(field)"
        case .invalidArgument(let argument): "invalid test server argument: \(argument)"
        case .timedOut(let timeout): "test server: condition not met within \(timeout)"
        case .cancelled: "test server: wait cancelled"
        case .stopped: "test server stopped before the condition was met"
        }
    }
}
