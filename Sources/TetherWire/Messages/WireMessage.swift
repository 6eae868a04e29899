/// A complete message received from the peer, owned.
enum WireMessage: Equatable, Sendable {
    /// A text message (validated UTF-8).
    case text(String)
    case binary([UInt8])
    case ping([UInt8])
    case pong([UInt8])
    /// A close frame. `code` is nil when the frame had no payload (which means 1005, "no status received").
    case close(code: UInt16?, reason: String)
}
