/// Messages written to a connection that was then lost before it proved it had received them
/// (`WebSocketEvent.unconfirmed`): the peer may or may not have them. Nothing is sent again; an app that must know
/// confirms at its own level (an acknowledgement, a sequence number the server echoes) and decides.
///
/// "Proved" means a pong: TCP delivers in order, so the pong of a ping written after a message proves the peer
/// received the message. A message written after the connection's last such ping is unconfirmed until the next pong.
/// `.now` and `.queued` sends are recorded alike, once their write completed; the greeting is not (it is sent again
/// on every open).
public struct UnconfirmedMessages: Sendable, Equatable {
    /// The generation of the connection they were written to.
    public var generation: Int
    /// The oldest unconfirmed messages, in the order their writes completed (one sender's in its own order), as
    /// many as `WebSocketConfiguration.unconfirmedLimits` keeps.
    public var messages: [WebSocketMessage]
    /// Messages written after those and not kept, the limits being reached: counted only.
    public var notKept: Int

    public init(generation: Int, messages: [WebSocketMessage], notKept: Int) {
        self.generation = generation
        self.messages = messages
        self.notKept = notKept
    }
}
