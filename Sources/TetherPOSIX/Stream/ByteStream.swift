#if os(Linux)
/// A connected byte stream on an event loop: a `TCPConnection`, or a `TLSStream` over one. It is what protocol glue
/// (the WebSocket client and server) needs of its connection, so that the same glue, with the same flow control,
/// runs over plain TCP and over TLS.
///
/// The contract is `TCPConnection`'s: reading starts with `setStreamHandler(_:)` (on the loop thread); the handler
/// gets the bytes in order and then exactly one `ended(_:on:)`; writes from one thread keep their order, either
/// complete or fail, and a sealing write is the last one accepted; `queuedWriteBytes` counts every byte accepted and
/// not yet handed to the kernel, which is what the outbound watermarks measure; `pauseReading()` stops the handler's
/// bytes (and the socket's reads) until `resumeReading()`.
package protocol ByteStream: AnyObject, Sendable {
    /// The loop whose thread runs this stream's I/O and callbacks.
    var loop: EventLoop { get }

    /// Installs the handler and starts reading. Call on the loop thread, at most once.
    func setStreamHandler(_ handler: any ByteStreamHandler)

    /// Writes `bytes` (borrowed; `array` is the same bytes as an array when the caller has one, which plain TCP
    /// queues without a copy) and reports the outcome by `delivery`: the one write behind the entry points
    /// `write(_:sealing:completion:)`, `write(borrowing:sealing:completion:)`, `write(_:onFailure:)` and
    /// `send(_:sealing:)`. A completion or failure handler runs on the loop thread, never inside this call; for
    /// `.awaited` the returned value is what to await. `sealing`: the last write accepted.
    func startWrite(
        _ bytes: UnsafeRawBufferPointer, array: [UInt8]?, sealing: Bool, delivery: WriteDelivery
    ) -> StartedSend

    /// Bytes accepted and not yet handed to the kernel (for TLS: the records waiting, and any plaintext waiting
    /// for the handshake).
    var queuedWriteBytes: Int { get }

    /// Calls `body` on the loop thread once at most `limit` bytes are queued (see
    /// `TCPConnection.whenQueuedWrites(atMost:_:)`). Called exactly once.
    func whenQueuedWrites(atMost limit: Int, _ body: @escaping @Sendable () -> Void)

    func pauseReading()
    func resumeReading()
    /// Graceful close: flushes what is queued (for TLS, then a `close_notify`), then FIN.
    func close()
    /// Abortive close: pending writes are discarded, the peer sees RST.
    func reset()
}

/// How a byte stream ended, as reported once to its handler.
package enum ByteStreamEnd: Equatable, Sendable, CustomStringConvertible {
    /// The peer closed its side (for TLS: after its `close_notify`).
    case endOfStream
    /// `close()` or `reset()` was called on this side.
    case closedLocally
    /// A socket error.
    case failed(SocketError)
    /// TLS failed: the handshake, a record, or the peer's end without `close_notify` (`.truncated`).
    case tlsFailed(TLSFailure)

    package init(_ end: TCPConnection.End) {
        switch end {
        case .endOfStream: self = .endOfStream
        case .closedLocally: self = .closedLocally
        case .failed(let error): self = .failed(error)
        }
    }

    package var description: String {
        switch self {
        case .endOfStream: "end of stream"
        case .closedLocally: "closed locally"
        case .failed(let error): "failed: \(error)"
        case .tlsFailed(let failure): "TLS failed: \(failure)"
        }
    }
}

/// Receives what happens on a `ByteStream`, on its loop's thread, never re-entrantly from inside the stream's own
/// `write`, `close` or `reset`.
package protocol ByteStreamHandler: AnyObject {
    /// Bytes from the peer, in order, borrowed for the call.
    func received(_ bytes: UnsafeRawBufferPointer, on stream: any ByteStream)
    /// The last call for this stream.
    func ended(_ end: ByteStreamEnd, on stream: any ByteStream)
}

extension TCPConnection: ByteStream {
    package func setStreamHandler(_ handler: any ByteStreamHandler) {
        self.setHandler(StreamHandlerAdapter(handler))
    }
}

/// Presents a `ByteStreamHandler` as the `TCPConnectionHandler` of a plain TCP stream.
private final class StreamHandlerAdapter: TCPConnectionHandler {
    private let handler: any ByteStreamHandler

    init(_ handler: any ByteStreamHandler) {
        self.handler = handler
    }

    func received(_ bytes: UnsafeRawBufferPointer, on connection: TCPConnection) {
        self.handler.received(bytes, on: connection)
    }

    func ended(_ end: TCPConnection.End, on connection: TCPConnection) {
        self.handler.ended(ByteStreamEnd(end), on: connection)
    }
}
#endif
