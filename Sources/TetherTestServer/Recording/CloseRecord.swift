/// One close frame.
public struct CloseRecord: Sendable, Equatable {
    /// When it was received or handed to the socket (ms since the server started).
    public var at: Int
    /// The code, or nil for an empty close frame.
    public var code: UInt16?
    /// The UTF-8 reason (empty when none).
    public var reason: String
}
