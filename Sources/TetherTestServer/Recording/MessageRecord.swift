/// One data message received.
public struct MessageRecord: Sendable, Equatable {
    /// When it was complete (ms since the server started).
    public var at: Int
    /// Text or binary.
    public var kind: Scenario.MessageKind
    /// Payload size in bytes.
    public var size: Int
    /// The payload, when the scenario records payloads.
    public var payload: [UInt8]?
    /// It came compressed (permessage-deflate: RSV1 on its first frame); `size` is the inflated size.
    public var compressed = false
}
