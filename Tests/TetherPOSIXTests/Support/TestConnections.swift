#if os(Linux)
import Glibc
import Testing
@testable import TetherPOSIX
import TetherTestSupport

/// What a `StreamingHandler` saw, in order.
enum ConnectionEvent: Equatable, Sendable {
    case bytes([UInt8])
    case ended(TCPConnection.End)
}

/// Forwards every callback into an `AsyncStream` (copying the borrowed bytes) and counts ends.
/// Runs on the loop thread; the stream is how tests wait, never sleeps.
final class StreamingHandler: TCPConnectionHandler {
    let continuation: AsyncStream<ConnectionEvent>.Continuation
    let endCount: LoopBound<Int>
    let byteCount: LoopBound<Int>

    init(
        continuation: AsyncStream<ConnectionEvent>.Continuation,
        endCount: LoopBound<Int>,
        byteCount: LoopBound<Int>
    ) {
        self.continuation = continuation
        self.endCount = endCount
        self.byteCount = byteCount
    }

    func received(_ bytes: UnsafeRawBufferPointer, on connection: TCPConnection) {
        self.byteCount.value += bytes.count
        self.continuation.yield(.bytes(Array(bytes)))
    }

    func ended(_ end: TCPConnection.End, on connection: TCPConnection) {
        self.endCount.value += 1
        // Not finishing the stream: a (wrong) second end would still be seen by the test.
        self.continuation.yield(.ended(end))
    }
}

/// The test side of a connection with a `StreamingHandler`.
struct ConnectionProbe {
    let connection: TCPConnection
    let endCount: LoopBound<Int>
    let byteCount: LoopBound<Int>
    private var iterator: AsyncStream<ConnectionEvent>.AsyncIterator
    private var buffered: [UInt8] = []
    private(set) var end: TCPConnection.End?

    /// Installs a `StreamingHandler` on `connection` (on its loop).
    init(_ connection: TCPConnection) async throws {
        let (stream, continuation) = AsyncStream.makeStream(of: ConnectionEvent.self)
        let endCount = LoopBound(0, loop: connection.loop)
        let byteCount = LoopBound(0, loop: connection.loop)
        try await connection.loop.submit {
            connection.setHandler(
                StreamingHandler(continuation: continuation, endCount: endCount, byteCount: byteCount)
            )
        }
        self.connection = connection
        self.endCount = endCount
        self.byteCount = byteCount
        self.iterator = stream.makeAsyncIterator()
    }

    /// Reads exactly `count` bytes, or fewer if the connection ends first.
    mutating func read(count: Int) async -> [UInt8] {
        while self.buffered.count < count, self.end == nil {
            await self.next()
        }
        let taken = Array(self.buffered.prefix(count))
        self.buffered.removeFirst(taken.count)
        return taken
    }

    /// Reads until the end and returns the bytes and the end.
    mutating func readToEnd() async -> (bytes: [UInt8], end: TCPConnection.End) {
        while self.end == nil { await self.next() }
        defer { self.buffered.removeAll() }
        return (self.buffered, self.end!)
    }

    private mutating func next() async {
        switch await self.iterator.next() {
        case .bytes(let bytes)?: self.buffered.append(contentsOf: bytes)
        case .ended(let end)?: self.end = end
        case nil: preconditionFailure("the handler's stream never finishes")
        }
    }

    /// How many times `ended` was called, read on the loop after all queued work.
    func endsDelivered() async throws -> Int {
        let endCount = self.endCount
        return try await self.connection.loop.submit { endCount.value }
    }

    /// How many bytes the handler has received so far, read on the loop after all queued work.
    func bytesDelivered() async throws -> Int {
        let byteCount = self.byteCount
        return try await self.connection.loop.submit { byteCount.value }
    }
}

/// Echoes every byte back, from the loop thread, using the borrowed-buffer write.
final class EchoHandler: TCPConnectionHandler {
    func received(_ bytes: UnsafeRawBufferPointer, on connection: TCPConnection) {
        connection.write(borrowing: bytes)
    }

    func ended(_ end: TCPConnection.End, on connection: TCPConnection) {}
}

/// A listener whose accepted connections arrive on a stream, not yet reading.
struct AcceptedConnections {
    let listener: TCPListener
    private var iterator: AsyncStream<TCPConnection>.AsyncIterator

    init(
        host: String = "127.0.0.1",
        backlog: Int32 = 128,
        loop: EventLoop,
        namespace: NetworkNamespace? = nil
    ) throws {
        self.listener = try TCPListener.bind(host: host, backlog: backlog, loop: loop, namespace: namespace)
        let (stream, continuation) = AsyncStream.makeStream(of: TCPConnection.self)
        self.listener.start { continuation.yield($0) }
        self.iterator = stream.makeAsyncIterator()
    }

    var address: SocketAddress { self.listener.address }

    mutating func next() async -> TCPConnection {
        await self.iterator.next()!
    }
}

/// Starts a listener that echoes on every accepted connection.
func startEchoServer(
    host: String = "127.0.0.1",
    loop: EventLoop,
    namespace: NetworkNamespace? = nil
) throws -> TCPListener {
    let listener = try TCPListener.bind(host: host, loop: loop, namespace: namespace)
    listener.start { connection in connection.setHandler(EchoHandler()) }
    return listener
}

extension ReservedPort {
    var address: SocketAddress { loopback(port: self.port) }
}

/// Connects to `addresses` on `loop` with a generous timeout (loopback answers at once).
func connect(
    to addresses: [SocketAddress],
    timeout: Duration = .seconds(5),
    loop: EventLoop
) async throws(SocketError) -> TCPConnection {
    try await TCPConnection.connect(to: addresses, timeout: timeout, loop: loop)
}

/// 127.0.0.1 with `port`.
func loopback(port: Int) -> SocketAddress {
    SocketAddress(ip: "127.0.0.1", port: port)!
}

/// Expects `actual == expected` for large byte arrays, reporting the length and the first
/// difference instead of printing megabytes.
func expectSameBytes(_ actual: [UInt8], _ expected: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
    guard actual != expected else { return }
    let firstDifference = zip(actual, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset
    Issue.record(
        "got \(actual.count) bytes, expected \(expected.count); first difference at \(firstDifference ?? -1)",
        sourceLocation: sourceLocation
    )
}

/// Deterministic, non-repeating-looking test bytes.
func patternBytes(count: Int, seed: UInt32 = 1) -> [UInt8] {
    var state = seed
    return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
        for index in 0..<count {
            state = state &* 1_664_525 &+ 1_013_904_223
            buffer[index] = UInt8(truncatingIfNeeded: state >> 24)
        }
        initialized = count
    }
}
#endif
