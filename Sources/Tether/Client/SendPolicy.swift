/// How `WebSocketClient.send(_:policy:)` treats a message when no connection is open.
public enum SendPolicy: Equatable, Hashable, Sendable {
    /// Send on the open connection — after the messages queued before it, never overtaking them — or throw
    /// `WebSocketSendError.notOpen`. The default.
    case now
    /// Queue it in the client's outbox, in order, to be written on the current connection once it is open and
    /// greeted, or on the next one; it waits at most `expiresAfter` (nil: until the client is stopped) and is
    /// then reported as `.outboxDropped(_, reason: .expired)` without being sent.
    case queued(expiresAfter: Duration?)
}
