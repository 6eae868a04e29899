/// How and when a connection ended.
public struct EndRecord: Sendable, Equatable {
    /// When the socket was closed (ms since the server started).
    public var at: Int
    /// Why.
    public var reason: ConnectionEnd
}
