import Foundation

/// The URL and headers of one connection attempt, as a request provider makes them
/// (`WebSocketConfiguration.requestProvider`): a fresh token in a header or the URL, a signed URL, a server picked
/// for this attempt.
///
/// It holds secrets, so nothing prints them: its description, debug description and mirror show the URL without
/// user info, query or fragment, and the headers by name only.
public struct ConnectionRequest: Sendable {
    /// Makes the request of each attempt, told about the attempt (`Context`): called before every attempt, in a
    /// task of the client's that holds the client only while it hands the request over, within the connect
    /// deadline, and cancelled by `stop()`. An error it throws ends the attempt as `request_failed` (retried by the
    /// backoff and the retry policy).
    public typealias Provider = @Sendable (Context) async throws -> ConnectionRequest

    /// What a provider is told about the attempt it makes the request for.
    public struct Context: Equatable, Sendable {
        /// The generation of the connection the request is for (`ConnectionState.generation` once it is made).
        public var generation: Int
        /// Failed attempts since the connection last proved healthy (`ConnectionState.attempts`).
        public var attempts: Int
        /// Why the session's previous connection or attempt ended: nil for the first attempt since `start()`;
        /// `.peerClosed(code:)` when the server closed it, `.handshakeRejected(status:)` when it answered the
        /// upgrade with an HTTP status, `.connectFailed`, `.connectTimeout`, `.receiveFailed`, ... for a transport
        /// failure, `.requestFailed` when the provider itself failed.
        public var previousEnd: CloseReason?

        public init(generation: Int, attempts: Int, previousEnd: CloseReason?) {
            self.generation = generation
            self.attempts = attempts
            self.previousEnd = previousEnd
        }

        /// Whether the server refused the previous attempt's credentials: it answered the upgrade with 401 or 403.
        /// The client asks once more at once, before the attempt counts as failed: make fresh credentials.
        public var credentialsRejected: Bool {
            self.previousEnd == .handshakeRejected(status: 401) || self.previousEnd == .handshakeRejected(status: 403)
        }
    }

    /// The `ws://` or `wss://` URL of this attempt. Its query and user info never appear in logs or events.
    public var url: URL
    /// The extra HTTP headers of this attempt's opening handshake (for example `Authorization`), checked by the
    /// rules of `WebSocketConfiguration.headers` before the attempt: a header the handshake sets itself, or a value
    /// with a line break, ends the attempt as `request_failed`. Their values are never logged.
    public var headers: [(name: String, value: String)]

    public init(url: URL, headers: [(name: String, value: String)] = []) {
        self.url = url
        self.headers = headers
    }
}

extension ConnectionRequest: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// `ConnectionRequest(wss://example.com/feed (redacted), headers: [Authorization: (redacted)])`.
    public var description: String {
        let headers = redactedHeaders(self.headers).joined(separator: ", ")
        return "ConnectionRequest(\(redactedURL(self.url)), headers: [\(headers)])"
    }

    public var debugDescription: String { self.description }

    public var customMirror: Mirror {
        Mirror(
            self, children: ["url": redactedURL(self.url), "headers": redactedHeaders(self.headers)],
            displayStyle: .struct)
    }
}
