/// How a write the machine ordered (`.writeQueued`, `.writeParkedSend`) ended.
public enum WriteResult: Equatable, Sendable {
    /// Handed to the connection in full.
    case written
    /// The connection was not open: nothing of the message was written.
    case notOpen
    /// The connection failed during the write: the peer may or may not have it.
    case interrupted
    /// The connection refused the message itself, larger than it sends: nothing of it was written, and the
    /// connection is fine.
    case tooLarge
}
