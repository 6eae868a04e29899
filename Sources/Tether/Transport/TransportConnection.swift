/// One connection made by a transport. All methods may be called from any context.
public protocol TransportConnection: AnyObject, Sendable {
    /// The connection's events: zero or one `.opened`, then messages and pong results,
    /// then exactly one `.ended`, after which the stream finishes. Single consumer.
    var events: AsyncStream<TransportEvent> { get }
    /// Sends a data message. Suspends while the outbound queue is above its high watermark (until it is down to
    /// the low one), then returns when the message was handed to the kernel (or the platform API); throws
    /// `WebSocketSendError` otherwise. Never drops a message silently.
    nonisolated(nonsending) func send(_ message: WebSocketMessage) async throws
    /// Sends a data message as `send(_:)` does, compressed or not as `compression` says when the connection
    /// negotiated permessage-deflate (otherwise as it is). Default: `send(_:)`, for a transport that never
    /// compresses.
    nonisolated(nonsending) func send(_ message: WebSocketMessage, compression: MessageCompression) async throws
    /// Sends a ping identified by `id`; the result arrives as `.pong(id:)` or `.pingFailed(id:)`.
    func sendPing(id: UInt64)
    /// Starts the closing handshake with `code`; the TCP connection is dropped if the peer does not
    /// answer within the close timeout. Ends with `.ended(.closedLocally)` once the peer answers (its close frame,
    /// or its end of the stream after ours), `.ended(.receiveFailed)` when it does not (the close timeout, a reset),
    /// unless another end came first: the client takes only an answer for proof that what it wrote arrived.
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

    /// What the connection has received from the peer, at this moment: how many frames arrived whole, whether
    /// part of the next one has, and when the latest bytes and the latest whole frame came (see `InboundProgress`).
    /// The client asks only when a pong is overdue: while a frame that was arriving then keeps arriving, the pong
    /// may be queued behind it, and the connection is not declared dead. Nil (the default): the transport cannot
    /// tell (it delivers whole messages only, as `URLSessionWebSocketTask` does), and a late pong is a dead link.
    /// Any thread; cheap enough to call at a deadline, not meant for every read.
    func inboundProgress() -> InboundProgress?

    /// How long each step of the attempt took so far (see `AttemptTimings`): final once the connection reported
    /// `.opened` or an `.ended` before it; before that, the steps reached, the running one unfinished. The client
    /// asks when the connection opens or ends before it, and at its connect deadline, and puts the answer on the
    /// attempt's record (`LogRecord.timings`). Nil (the default): the transport does not measure. Any thread.
    func attemptTimings() -> AttemptTimings?

    /// Where the consumer of `events` should run, if the transport has a better place than the global
    /// concurrent executor: the socket transport names its event loop, so that an event is handled on the thread
    /// that read it instead of waking another. Work run there must not block. Nil (the default): no preference.
    var preferredExecutor: (any TaskExecutor)? { get }
}

extension TransportConnection {
    public var preferredExecutor: (any TaskExecutor)? { nil }

    public nonisolated(nonsending) func send(
        _ message: WebSocketMessage, compression: MessageCompression
    ) async throws {
        try await self.send(message)
    }

    public func holdReading(_ held: Bool) {}

    public func inboundProgress() -> InboundProgress? { nil }

    public func attemptTimings() -> AttemptTimings? { nil }
}
