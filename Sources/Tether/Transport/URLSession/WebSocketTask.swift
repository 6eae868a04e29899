import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The calls `URLSessionConnection` makes on one WebSocket task and the session made for it alone.
///
/// `FoundationWebSocketTask` is the real one, a thin shell over `URLSessionWebSocketTask` and its `URLSession`;
/// tests script a fake, so that every trap the connection handles is exercised on Linux, where Foundation's task
/// cannot connect.
protocol WebSocketTask: AnyObject, Sendable {
    /// The largest message the task accepts; set before `resume()`.
    var maximumMessageSize: Int { get set }
    /// The handshake's response, once there is one.
    var response: HTTPURLResponse? { get }
    /// Starts connecting.
    func resume()
    /// Sends a data message; returns when the platform took it.
    func send(_ message: URLSessionWebSocketTask.Message) async throws
    /// Asks for the next message. The completion may never run (for example when TCP dies).
    func receive(_ completion: @escaping @Sendable (Result<URLSessionWebSocketTask.Message, any Error>) -> Void)
    /// Sends a ping. The completion may run twice, or never.
    func sendPing(_ pongReceived: @escaping @Sendable ((any Error)?) -> Void)
    /// Sends a close frame with `code` and `reason`, then tears the task down.
    func cancel(closeCode: UInt16, reason: Data)
    /// Releases the session, which holds its delegate until it is invalidated; cancels the task if still running.
    func invalidateSession()
}

/// The delegate callbacks of one task, as the connection receives them (in order, one at a time).
protocol WebSocketTaskDelegate: AnyObject, Sendable {
    /// The opening handshake completed; `subprotocol` is the one the server selected.
    func taskDidOpen(subprotocol: String?)
    /// The peer's close frame arrived, with its raw code (not terminal: `taskDidComplete` follows).
    func taskDidClose(code: Int, reason: Data?)
    /// An authentication challenge was refused: the server's certificate, or a client identity that could not be
    /// presented (the challenge is cancelled, and `taskDidComplete` follows).
    func taskDidRefuseChallenge(_ refusal: ChallengeRefusal)
    /// The server redirected the handshake with `status`, and URLSession would follow it with `request`: the
    /// request to follow it with (URLSession's, without the credentials a hop to another origin must not carry), or
    /// nil to refuse it (the task then completes without opening; `taskDidComplete` follows).
    func taskWillRedirect(status: Int, to request: URLRequest) -> URLRequest?
    /// The terminal callback: the task ended, with `error` unless it ended cleanly.
    func taskDidComplete(error: (any Error)?)
    /// URLSession finished collecting the task's metrics (as the task completes, before `taskDidComplete`): the
    /// last request's dates, and when they were collected.
    func taskDidCollectMetrics(_ times: URLSessionTransactionTimes, at end: Date)
}

/// What one connection's session applies besides the request: how it answers the server-trust challenge, the
/// proxy it goes through (a `connectionProxyDictionary`, nil for none), and the identity it presents when the
/// server asks for a client certificate.
struct WebSocketTaskSettings: Sendable {
    var trust: ServerTrustPolicy
    var proxy: [String: any Sendable]?
    var clientIdentity: TLSOptions.ClientIdentity?
}

/// Makes the task of one connection, delivering its callbacks to `delegate`.
protocol WebSocketTaskFactory: Sendable {
    func makeTask(
        for request: URLRequest, connection: WebSocketTaskSettings, delegate: any WebSocketTaskDelegate
    ) -> any WebSocketTask
}
