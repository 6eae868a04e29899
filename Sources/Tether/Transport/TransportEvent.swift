import Foundation
import TetherCore

/// An event from one transport connection. The consumer tags it with the generation captured
/// when the connection was created; the transport itself never needs to know generations.
public enum TransportEvent: Sendable {
    /// The server redirected the opening handshake with `status` (301, 302, 303, 307 or 308) and the connection
    /// follows it to `url` (resolved, with `http`/`https` read as `ws`/`wss`), within the same attempt and its
    /// deadline: one event per hop, before `.opened` or `.ended`. `url` may carry a token in its query: the client
    /// records it redacted (`LogRecord.Event.redirected`).
    case redirected(status: Int, to: URL)
    /// The opening handshake completed, with what it agreed (the subprotocol the server selected, the extensions,
    /// the response headers `TransportRequest.responseHeaderNames` asks for).
    case opened(HandshakeResult)
    /// A complete data message, in the order the peer sent it.
    case message(WebSocketMessage)
    /// The pong for the ping with this id arrived. Reported at most once per id.
    case pong(id: UInt64)
    /// The ping with this id could not be sent. Reported at most once per id.
    case pingFailed(id: UInt64)
    /// The terminal event: exactly one per connection, always the last element of `events`.
    case ended(TransportEnd)
}

extension TransportEvent {
    /// The opening handshake completed with `subprotocol` selected and nothing else to report: what a transport
    /// that sees no more of the response (or was written before `HandshakeResult`) reports.
    public static func opened(subprotocol: String?) -> TransportEvent {
        .opened(HandshakeResult(subprotocol: subprotocol))
    }
}
