#if os(Linux)
import TetherPOSIX
import TetherTestServer

/// A TCP connection to a test server that sends nothing (or only what a test writes, such as part of
/// a request), as a slowloris client does, and reports what the server does with it.
struct SilentSocket {
    enum Event: Sendable, Equatable {
        case bytes(Int)
        case ended(TCPConnection.End)
    }

    private final class Handler: TCPConnectionHandler {
        let continuation: AsyncStream<Event>.Continuation

        init(continuation: AsyncStream<Event>.Continuation) {
            self.continuation = continuation
        }

        func received(_ bytes: UnsafeRawBufferPointer, on connection: TCPConnection) {
            self.continuation.yield(.bytes(bytes.count))
        }

        func ended(_ end: TCPConnection.End, on connection: TCPConnection) {
            self.continuation.yield(.ended(end))
            self.continuation.finish()
        }
    }

    let connection: TCPConnection
    private var iterator: AsyncStream<Event>.AsyncIterator

    /// Connects (the kernel completes the TCP handshake even before the server accepts).
    static func connect(to server: TestServer) async throws -> SilentSocket {
        let connection = try await TCPConnection.connect(host: server.host, port: server.port, timeout: .seconds(2))
        let (stream, continuation) = AsyncStream.makeStream(of: Event.self)
        try await connection.loop.submit { connection.setHandler(Handler(continuation: continuation)) }
        return SilentSocket(connection: connection, iterator: stream.makeAsyncIterator())
    }

    /// How the server ended the connection, and how many bytes it sent first (none expected).
    mutating func end() async -> (end: TCPConnection.End?, bytesReceived: Int) {
        var bytes = 0
        while let event = await self.iterator.next() {
            switch event {
            case .bytes(let count): bytes += count
            case .ended(let end): return (end, bytes)
            }
        }
        return (nil, bytes)
    }
}
#endif
