import Foundation
import TetherCore
import TetherWire

/// A WebSocket message as the application sees it.
public enum WebSocketMessage: Equatable, Hashable, Sendable {
    case text(String)
    case binary(Data)
}

/// What a transport needs to open one connection.
public struct TransportRequest: Sendable {
    /// `ws://` or `wss://` URL, including path and query.
    public var url: URL
    /// Extra HTTP headers for the opening handshake (for example `Authorization`).
    public var headers: [(name: String, value: String)]
    /// Subprotocols offered in `Sec-WebSocket-Protocol`, in order of preference.
    public var subprotocols: [String]
    /// Largest message accepted from the peer, in bytes.
    public var maximumMessageSize: Int
    /// The transport's own bound on TCP connect plus the opening handshake, in milliseconds, for a transport used
    /// on its own. Under a `WebSocketClient` the session machine owns the connect deadline
    /// (`WebSocketConfiguration.connectTimeout`) and closes the attempt itself; the client sets this to twice that
    /// deadline plus one second, a backstop that only a stalled process could reach. Should it fire anyway, its
    /// `.connectFailed(.timedOut)` is recorded with the machine's reason, `connect_timeout`.
    public var connectTimeout: Int
    /// How long to wait for the peer's close frame after sending ours before dropping TCP, in milliseconds.
    public var closeTimeout: Int
    /// The levels of the bytes waiting to be written: `send` suspends above `high` until the queue is down to
    /// `low`, and the connection stops reading while what it owes the peer (pongs) cannot go out.
    public var outboundWatermarks: Watermarks
    /// How a `wss://` connection verifies its server (see `TLSOptions`). Default: verify against the system trust
    /// store.
    public var tls: TLSOptions
    /// Whether the connection tunnels through an HTTP proxy (see `ProxyConfiguration`). Default `.none`.
    public var proxy: ProxyConfiguration
    /// permessage-deflate to offer (see `CompressionOptions`); nil (the default): none.
    public var compression: CompressionOptions?

    public init(
        url: URL,
        headers: [(name: String, value: String)] = [],
        subprotocols: [String] = [],
        maximumMessageSize: Int = 16 << 20,
        connectTimeout: Int = 10_000,
        closeTimeout: Int = 2_000,
        outboundWatermarks: Watermarks = .standard,
        tls: TLSOptions = TLSOptions(),
        proxy: ProxyConfiguration = .none,
        compression: CompressionOptions? = nil
    ) {
        self.url = url
        self.headers = headers
        self.subprotocols = subprotocols
        self.maximumMessageSize = maximumMessageSize
        self.connectTimeout = connectTimeout
        self.closeTimeout = closeTimeout
        self.outboundWatermarks = outboundWatermarks
        self.tls = tls
        self.proxy = proxy
        self.compression = compression
    }
}

/// An event from one transport connection. The consumer tags it with the generation captured
/// when the connection was created; the transport itself never needs to know generations.
public enum TransportEvent: Sendable {
    /// The opening handshake completed. `subprotocol` is the one the server selected, if any.
    case opened(subprotocol: String?)
    /// A complete data message, in the order the peer sent it.
    case message(WebSocketMessage)
    /// The pong for the ping with this id arrived. Reported at most once per id.
    case pong(id: UInt64)
    /// The ping with this id could not be sent. Reported at most once per id.
    case pingFailed(id: UInt64)
    /// The terminal event: exactly one per connection, always the last element of `events`.
    case ended(TransportEnd)
}

/// Errors thrown to the caller of `send`.
public enum WebSocketSendError: Error, Equatable, Sendable {
    /// There is no open connection, or it ended while the send waited for room in the outbound queue; nothing of
    /// the message was sent.
    case notOpen
    /// The message is larger than the transport allows.
    case messageTooLarge(size: Int, limit: Int)
    /// The connection failed while the message was being written; it may be lost.
    case connectionFailed
    /// `.queued` only: the outbox is at its limit (`WebSocketConfiguration.outboxLimits`); nothing was queued.
    case outboxFull
}

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

/// Why a queued message left the outbox without being written in full (`WebSocketEvent.outboxDropped`).
public enum OutboxDropReason: Equatable, Hashable, Sendable {
    /// It waited longer than its `expiresAfter`; it was never written.
    case expired
    /// The connection failed while it was being written: it may or may not have reached the peer, and it is not
    /// sent again (at most once).
    case writeInterrupted
    /// `stop()` was called while it waited; it was never written.
    case stopped
}

/// One connection made by a transport. All methods may be called from any context.
public protocol TransportConnection: AnyObject, Sendable {
    /// The connection's events: zero or one `.opened`, then messages and pong results,
    /// then exactly one `.ended`, after which the stream finishes. Single consumer.
    var events: AsyncStream<TransportEvent> { get }
    /// Sends a data message. Suspends while the outbound queue is above its high watermark (until it is down to
    /// the low one), then returns when the message was handed to the kernel (or the platform API); throws
    /// `WebSocketSendError` otherwise. Never drops a message silently.
    nonisolated(nonsending) func send(_ message: WebSocketMessage) async throws
    /// Sends a ping identified by `id`; the result arrives as `.pong(id:)` or `.pingFailed(id:)`.
    func sendPing(id: UInt64)
    /// Starts the closing handshake with `code`; the TCP connection is dropped if the peer does not
    /// answer within the close timeout. Ends with `.ended(.closedLocally)` unless another end came first.
    func close(code: UInt16, reason: String)
    /// Returns once the close frame of an earlier `close(code:reason:)` has been handed to the kernel (or the
    /// platform API), or once the connection has ended without sending one (it was not open yet, or broke
    /// first). Returns at once when no close frame is pending. The closing handshake goes on afterwards.
    ///
    /// The client awaits it (bounded by its close timeout) in `enterBackground()`, so that an app can hold a
    /// background-task assertion exactly until its 1001 close frame has gone out.
    func waitUntilCloseSent() async
    /// Stops reading from the peer while `held` (the consumer of the connection's messages is behind), so that the
    /// peer is slowed down by the transport's own flow control (TCP) instead of filling memory; resumes when not.
    /// Closes and the end are still reported once reading resumes. Default: no effect (a transport that cannot
    /// stop reading).
    func holdReading(_ held: Bool)

    /// Where the consumer of `events` should run, if the transport has a better place than the global
    /// concurrent executor: the socket transport names its event loop, so that an event is handled on the thread
    /// that read it instead of waking another. Work run there must not block. Nil (the default): no preference.
    var preferredExecutor: (any TaskExecutor)? { get }
}

extension TransportConnection {
    public var preferredExecutor: (any TaskExecutor)? { nil }

    public func holdReading(_ held: Bool) {}
}

/// Makes connections. One transport may serve many connections and many clients.
public protocol WebSocketTransport: Sendable {
    /// Starts connecting at once and returns the connection whose `events` report the outcome.
    /// Failures (bad URL scheme, refused, rejected handshake) arrive as `.ended(...)`, never as a throw.
    func connect(_ request: TransportRequest) -> any TransportConnection

    /// Whether this transport honours every setting of `request` (its TLS options and proxy, say): called when a
    /// client is created, with the request its configuration makes, so that a setting the transport cannot honour
    /// fails there, with the property named, instead of being ignored. A setting that can only be judged when
    /// connecting (a proxy from the environment) ends that connection instead. The default accepts everything: a
    /// transport of your own that ignores a setting should refuse it here.
    /// - Throws: `WebSocketConfigurationError` naming the first setting it cannot honour.
    func checkSupport(of request: TransportRequest) throws(WebSocketConfigurationError)

    /// Connects like `connect(_:)`, but hands every event of the connection to `handler` by a direct call on
    /// `executor`'s thread (isolated to it), in order, instead of the `events` stream (which then only finishes):
    /// no stream and no task between the transport and a consumer that runs on that executor. Returns nil, without
    /// connecting, when this transport cannot deliver on `executor`; the consumer then calls `connect(_:)` and
    /// reads `events`. The default returns nil.
    ///
    /// A transport that delivers must call `handler` only from work of its own on `executor` (a read, a timer, a
    /// later turn), never from inside a call the consumer makes into the connection, so that the consumer may call
    /// the connection from the handler. `.ended` is the last call. `WebSocketClient` passes its own executor (on
    /// Linux, its configuration's event loop), and `SocketTransport` delivers when that is the loop of its sockets.
    func connect(
        _ request: TransportRequest, deliveringOn executor: any SerialExecutor,
        _ handler: @escaping @Sendable (TransportEvent) -> Void
    ) -> (any TransportConnection)?
}

extension WebSocketTransport {
    public func checkSupport(of request: TransportRequest) throws(WebSocketConfigurationError) {}

    public func connect(
        _ request: TransportRequest, deliveringOn executor: any SerialExecutor,
        _ handler: @escaping @Sendable (TransportEvent) -> Void
    ) -> (any TransportConnection)? {
        nil
    }
}
