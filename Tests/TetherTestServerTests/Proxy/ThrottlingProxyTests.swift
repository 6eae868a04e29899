#if os(Linux)
import Synchronization
import Testing
import TetherPOSIX
import TetherTestServer

/// The throttling proxy the heartbeat's real-link tests run through: the rate holds, nothing is lost or reordered,
/// and a stall keeps the connection up without passing a byte more.
@Suite(.timeLimit(.minutes(1))) struct ThrottlingProxyTests {
    /// A server that writes `payload` to each connection and then closes it.
    final class Source: Sendable {
        let listener: TCPListener

        init(payload: [UInt8]) throws {
            self.listener = try TCPListener.bind(host: "127.0.0.1")
            self.listener.start { connection in
                connection.setHandler(Ignoring())
                connection.write(payload)
                connection.close()
            }
        }
    }

    final class Ignoring: TCPConnectionHandler {
        func received(_ bytes: UnsafeRawBufferPointer, on connection: TCPConnection) {}
        func ended(_ end: TCPConnection.End, on connection: TCPConnection) {}
    }

    /// A client that collects what it reads, and says each time how much it has.
    final class Sink: TCPConnectionHandler {
        var bytes: [UInt8] = []
        let progress: AsyncStream<(count: Int, end: TCPConnection.End?)>.Continuation

        init(_ progress: AsyncStream<(count: Int, end: TCPConnection.End?)>.Continuation) {
            self.progress = progress
        }

        func received(_ bytes: UnsafeRawBufferPointer, on connection: TCPConnection) {
            self.bytes.append(contentsOf: bytes)
            self.progress.yield((self.bytes.count, nil))
        }

        func ended(_ end: TCPConnection.End, on connection: TCPConnection) {
            self.progress.yield((self.bytes.count, end))
            self.progress.finish()
        }
    }

    static func connect(
        to proxy: ThrottlingProxy
    ) async throws -> (TCPConnection, LoopBound<Sink>, AsyncStream<(count: Int, end: TCPConnection.End?)>) {
        let (progress, sink) = AsyncStream.makeStream(of: (count: Int, end: TCPConnection.End?).self)
        let connection = try await TCPConnection.connect(host: "127.0.0.1", port: proxy.port, timeout: .seconds(5))
        let handler = try await connection.loop.submit {
            let handler = LoopBound(Sink(sink), loop: connection.loop)
            connection.setHandler(handler.value)
            return handler
        }
        return (connection, handler, progress)
    }

    @Test func bytesPassAtTheRateInOrderAndTheEndFollowsThem() async throws {
        let payload = (0..<30_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let source = try Source(payload: payload)
        let proxy = try ThrottlingProxy(upstreamPort: source.listener.port, bytesPerSecond: 100_000)
        let started = ContinuousClock.now
        let (connection, sink, progress) = try await Self.connect(to: proxy)
        var last: (count: Int, end: TCPConnection.End?)?
        for await step in progress { last = step }
        // 30 kB at 100 kB/s: 0.3 s, less the 50 ms a first burst may take at once. Never sooner; later on a busy
        // machine.
        #expect(ContinuousClock.now - started >= .milliseconds(240))
        #expect(last?.count == 30_000 && last?.end == .endOfStream)
        let received = try await connection.loop.submit { sink.value.bytes }
        #expect(received == payload)
        #expect(proxy.passed(.toClient) == 30_000)
        await proxy.stop()
        await source.listener.close()
    }

    @Test func aStallAfterSomeBytesPassesExactlyThemAndKeepsTheConnectionUp() async throws {
        let source = try Source(payload: [UInt8](repeating: 1, count: 40_000))
        let proxy = try ThrottlingProxy(
            upstreamPort: source.listener.port, bytesPerSecond: 200_000, stallingToClientAfter: 10_000)
        let (_, _, progress) = try await Self.connect(to: proxy)
        var iterator = progress.makeAsyncIterator()
        while let step = await iterator.next(), step.count < 10_000 {
            #expect(step.end == nil)
        }
        #expect(proxy.passed(.toClient) == 10_000)
        // The connection is still up (the server's end waits in the proxy): stopping the proxy resets it.
        await proxy.stop()
        var end: TCPConnection.End?
        while let step = await iterator.next() {
            #expect(step.count == 10_000)
            end = step.end
        }
        #expect(end == .failed(.reset))
        await source.listener.close()
    }
}
#endif
