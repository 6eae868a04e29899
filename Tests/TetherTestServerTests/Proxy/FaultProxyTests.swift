#if os(Linux)
import Testing
import TetherPOSIX
@testable import TetherTestServer
@testable import TetherWire

/// The fault proxy of the delivery tests: it relays whole (in halves, late), resets, cuts mid-frame, black-holes, and
/// forgets a connection once it has ended.
@Suite(.timeLimit(.minutes(1))) struct FaultProxyTests {
    /// A raw client of `server` through `proxy`.
    static func open(_ server: TestServer, via proxy: FaultProxy) async throws -> RawClient {
        var client = try await RawClient.connect(to: server, port: proxy.port)
        _ = try await client.handshakeResponse().get()
        return client
    }

    @Test func everythingPassesInOrderSplitAndLateAndAnEndedConnectionIsForgotten() async throws {
        let server = try TestServer(scenario: .echo)
        let proxy = try FaultProxy(upstreamPort: server.port, latency: .milliseconds(20), splitting: true)
        var client = try await Self.open(server, via: proxy)
        let start = ContinuousClock.now
        let texts = (0..<20).map { "message \($0) " + String(repeating: "x", count: $0 * 100) }
        for text in texts {
            try await client.send(text: text)
        }
        var echoed: [String] = []
        while echoed.count < texts.count, case .text(let text)? = await client.nextMessage() {
            echoed.append(text)
        }
        #expect(echoed == texts)
        #expect(ContinuousClock.now - start >= .milliseconds(40))  // 20 ms each way, at least
        #expect(proxy.liveConnections == 1 && proxy.acceptedConnections == 1)
        try await client.close(code: 1000)
        _ = await client.readToEnd()
        _ = try await server.waitForEnd(ofConnection: 1)
        await proxy.stop()
        #expect(proxy.liveConnections == 0)
        await server.stop()
    }

    @Test func aResetReachesBothSides() async throws {
        let server = try TestServer(scenario: .echo)
        let proxy = try FaultProxy(upstreamPort: server.port)
        var client = try await Self.open(server, via: proxy)
        _ = try await server.waitForConnection(1) { $0.openedAt != nil }
        await proxy.resetConnections()
        let (_, end) = await client.readToEnd()
        #expect(end == .failed(.reset))
        let record = try await server.waitForEnd(ofConnection: 1)
        #expect(record.end?.reason == .peerReset)
        #expect(proxy.liveConnections == 0)
        await proxy.stop()
        await server.stop()
    }

    @Test func aCutPassesHalfOfTheNextFrameThenEndsTheConnection() async throws {
        let server = try TestServer(scenario: .echo)
        let proxy = try FaultProxy(upstreamPort: server.port)
        var client = try await Self.open(server, via: proxy)
        await proxy.cutConnections()
        try await client.send(text: String(repeating: "y", count: 1_000))
        var events: [RawClientEvent] = []
        while let event = await client.next() {
            events.append(event)
        }
        // Half a frame, then the end of the stream: no message arrived whole.
        #expect(!events.contains { if case .message = $0 { true } else { false } })
        #expect(client.end == .endOfStream)
        #expect(proxy.passed.toClient < 1_000)
        await proxy.stop()
        await server.stop()
    }

    @Test func aBlackHolePassesNothingUntilItEndsAndTheConnectionStaysUp() async throws {
        let server = try TestServer(scenario: .echo)
        let proxy = try FaultProxy(upstreamPort: server.port)
        var client = try await Self.open(server, via: proxy)
        proxy.blackHole(true)
        let before = proxy.passed
        try await client.send(text: "held")
        // The server sees nothing while the hole lasts; a later message proves the order is kept.
        try await client.send(text: "after")
        #expect(server.connection(1)?.messageCount == 0)
        #expect(proxy.passed == before)
        proxy.blackHole(false)
        #expect(await client.nextMessage() == .text("held"))
        #expect(await client.nextMessage() == .text("after"))
        #expect(proxy.liveConnections == 1)
        await proxy.stop()
        await server.stop()
    }
}
#endif
