#if os(Linux)
import Testing
import TetherWire
@testable import TetherCLI
#if canImport(Glibc)
import Glibc
#endif

@Suite struct PingFloodPeerTests {
    /// A fresh `Sec-WebSocket-Key`, made in a synchronous function: under ThreadSanitizer, the instrumented
    /// `inout` access to a zero-sized `SystemRandomNumberGenerator` kept in an async function's frame reads the shadow
    /// of an address that is not memory (the generator has no storage) and crashes with SEGV inside TSan; in a
    /// synchronous frame it is a real stack address.
    private static func randomKey() -> [UInt8] {
        var random = SystemRandomNumberGenerator()
        return ClientHandshake.randomKey(using: &random)
    }

    @Test func thePeerFloodsAClientThatNeverReadsUntilItsWritesStall() async throws {
        let peer = try PingFloodPeer()
        defer { peer.close() }
        let socket = try LoopbackSockets.connect(to: peer.port)
        defer { close(socket) }
        let handshake = try ClientHandshake(
            host: "127.0.0.1", port: peer.port, secure: false, target: "/",
            key: Self.randomKey())
        let request = handshake.request
        #expect(request.withUnsafeBytes { send(socket, $0.baseAddress, $0.count, 0) } == request.count)
        #expect(await peer.accept(within: .seconds(5)) == nil)
        // The 101 validates against the key (its Sec-WebSocket-Accept is TetherWire's).
        var parser = HandshakeResponseParser(handshake: handshake)
        var buffer = [UInt8](repeating: 0, count: peer.handshake.response)
        #expect(buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, Int32(MSG_WAITALL)) }
            == buffer.count)
        parser.append(buffer)
        #expect(try parser.parse() != nil)
        #expect(peer.handshake.request == handshake.request.count)

        // A client that reads nothing holds no pongs: only the window counts.
        let flood = await peer.flood(
            maxPings: 1_000_000, stallWindow: .milliseconds(100), queuedAbove: -1, within: .seconds(10))
        #expect(flood.stalled && flood.failure == nil, "\(flood)")
        #expect(flood.pings > 0)
        // The kernel's counts: the peer wrote the 101 and the pings; the client read the 101 and nothing more.
        let client = try #require(flood.client)
        #expect(flood.peer?.written == peer.handshake.response + flood.bytes)
        #expect(client.read == peer.handshake.response)
        #expect(client.received > peer.handshake.response && client.received <= peer.handshake.response + flood.bytes)
        #expect(flood.clientBefore.map { client.written - $0.written } == 0)
    }

    @Test func thePeersFloodStopsAtItsCountBound() async throws {
        let peer = try PingFloodPeer()
        defer { peer.close() }
        let socket = try await Self.upgrade(to: peer)
        defer { close(socket) }
        let flood = await peer.flood(
            maxPings: 10, stallWindow: .milliseconds(100), queuedAbove: -1, within: .seconds(5))
        #expect(!flood.stalled && flood.pings == 10 && flood.lastPing == 10)
        #expect(flood.failure == nil)  // a client that keeps up with the whole flood is not a failure
        #expect(flood.peer != nil)  // the counters are taken at the end of the flood as at a stall
    }

    @Test func aClientHoldingFewPongsIsSlowNotStalled() async throws {
        let peer = try PingFloodPeer()
        defer { peer.close() }
        let socket = try await Self.upgrade(to: peer)
        defer { close(socket) }
        // This client reads nothing, so it holds no pongs: never above a threshold of 1 byte. The flood goes on until
        // its time bound.
        let flood = await peer.flood(
            maxPings: 1_000_000, stallWindow: .milliseconds(100), queuedAbove: 1, within: .milliseconds(500))
        #expect(!flood.stalled && flood.pings > 0)
        #expect(flood.failure == "no stall within the time bound")
    }

    /// A raw client socket that has sent its upgrade request to `peer`, which answered it.
    static func upgrade(to peer: PingFloodPeer) async throws -> Int32 {
        let socket = try LoopbackSockets.connect(to: peer.port)
        let handshake = try ClientHandshake(
            host: "127.0.0.1", port: peer.port, secure: false, target: "/",
            key: Self.randomKey())
        _ = handshake.request.withUnsafeBytes { send(socket, $0.baseAddress, $0.count, 0) }
        let failure = await peer.accept(within: .seconds(5))
        #expect(failure == nil)
        return socket
    }
}
#endif
