/// One ping or pong.
public struct ControlFrameRecord: Sendable, Equatable {
    /// When it was received or handed to the socket (ms since the server started).
    public var at: Int
    /// The payload (at most 125 bytes).
    public var payload: [UInt8]
}
