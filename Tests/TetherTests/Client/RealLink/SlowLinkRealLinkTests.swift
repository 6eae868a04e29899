#if os(Linux)
import Foundation
import Testing
import TetherCore
import TetherTestServer
@testable import Tether
import TetherTesting
import TetherTestSupport

/// The heartbeat on a slow link, for real: the test server sends one large message on each connection, through a
/// proxy that passes a fixed rate each way (`ThrottlingProxy`, loopback, no root). The pong the server owes comes
/// behind that message, as TCP delivers it: the client must keep the connection while the message's bytes arrive,
/// and still declare a link that stops mid-frame dead within the pong timeout of its last byte.
///
/// Scaled down (150 kB at 100 kB/s with a 100 ms / 200 ms heartbeat: the message takes 7.5 pong timeouts, as the
/// issue's 1.5 MB at 100 kB/s does with 1 s / 2 s); the full case runs alone in CI
/// (`TETHER_SLOW_LINK_TESTS=1`, `.ci/run`) and in `tether check`'s `slow-link` scenario. Under a slowed process
/// (`TestTime.scale`, ThreadSanitizer) the heartbeat is that many times longer, and so is the message, so that it still
/// takes 7.5 pong timeouts at the same rate.
@Suite(.serialized, .timeLimit(.minutes(2))) struct SlowLinkRealLinkTests {
    struct Setup {
        let server: TestServer
        let proxy: ThrottlingProxy
        let client: WebSocketClient
        let probe: EventRecorder
        /// Read just before the client was made: its times (ms since it was made) count from here, or a little later.
        let clientStart: ContinuousClock.Instant

        init(
            size: Int, bytesPerSecond: Int, stallingAfter: Int? = nil, interval: Duration, timeout: Duration
        ) throws {
            self.server = try TestServer(scenario: .send(count: 1, size: size, kind: .binary))
            self.proxy = try ThrottlingProxy(
                upstreamPort: self.server.port, bytesPerSecond: bytesPerSecond, stallingToClientAfter: stallingAfter)
            var configuration = WebSocketClient.Configuration(
                url: URL(string: "ws://127.0.0.1:\(self.proxy.port)/slow")!, heartbeatInterval: interval,
                heartbeatTimeout: timeout, pathMonitoring: .none)
            configuration.recordsMessages = true
            configuration.closeTimeout = .milliseconds(300)  // the stalled link never passes the server's answer
            self.clientStart = ContinuousClock.now
            self.client = try WebSocketClient(configuration: configuration, randomSeed: 36)
            self.probe = EventRecorder(self.client.events)
        }

        func stop() async {
            await self.client.stop()
            await self.proxy.stop()
            await self.server.stop()
        }
    }

    /// A large message on a slow link arrives on the first connection: no pong timeout, no reconnect.
    static func largeMessageArrivesOnTheFirstConnection(
        size: Int, bytesPerSecond: Int, interval: Duration, timeout: Duration, wait: Duration
    ) async throws {
        let setup = try Setup(size: size, bytesPerSecond: bytesPerSecond, interval: interval, timeout: timeout)
        await setup.client.start()
        let message = try #require(await setup.probe.record(.message, timeout: wait))
        #expect(message.generation == 1 && message.bytes == size)
        let pong = try #require(await setup.probe.record(.pong, timeout: wait) { $0.time >= message.time })
        let records = setup.probe.records
        // On failure, the whole course: when each byte-driven deadline move and each ping and pong came.
        let course = records.map(\.logLine).joined(separator: "\n")
        #expect(!records.contains { $0.kind == .closed }, "\(course)")
        #expect(records.filter { $0.kind == .connecting }.count == 1)
        // The pong that was due while the message arrived came behind it: its round trip spans the wait.
        let moved = records.filter { $0.kind == .pongDeadlineMoved }
        #expect(!moved.isEmpty)
        #expect((pong.rtt ?? 0) > timeout.milliseconds)
        #expect(setup.server.connections.count == 1)
        await setup.stop()
    }

    @Test func aLargeMessageOnASlowLinkArrivesOnTheFirstConnection() async throws {
        try await Self.largeMessageArrivesOnTheFirstConnection(
            size: 150_000 * TestTime.scale, bytesPerSecond: 100_000, interval: TestTime.scaled(.milliseconds(100)),
            timeout: TestTime.scaled(.milliseconds(200)), wait: TestTime.scaled(.seconds(20)))
    }

    /// The issue's case at full size: 1.5 MB at 100 kB/s (15 s) with a 1 s / 2 s heartbeat.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["TETHER_SLOW_LINK_TESTS"] == "1",
                   "15 s: runs alone in CI (TETHER_SLOW_LINK_TESTS=1)"))
    func theIssuesCaseAtFullSize() async throws {
        try await Self.largeMessageArrivesOnTheFirstConnection(
            size: 1_500_000, bytesPerSecond: 100_000, interval: .seconds(1), timeout: .seconds(2),
            wait: .seconds(60))
    }

    /// The link stops delivering in the middle of the message (the proxy passes 100 kB of 150 kB, then nothing, the
    /// connections staying up): dead one pong timeout after the last byte, not before, not much later. Under a
    /// slowed process the heartbeat is `TestTime.scale` times longer and so are the message and the part that
    /// passes, so that the bytes still stop after the first pong deadline (which they move) as at scale 1.
    @Test func aLinkThatStopsMidFrameIsDeadWithinThePongTimeoutOfItsLastByte() async throws {
        let timeout = TestTime.scaled(milliseconds: 200)
        let passing = 100_000 * TestTime.scale
        let setup = try Setup(
            size: 150_000 * TestTime.scale, bytesPerSecond: 200_000, stallingAfter: passing,
            interval: TestTime.scaled(.milliseconds(100)), timeout: .milliseconds(timeout))
        await setup.client.start()
        let closed = try #require(await setup.probe.record(.closed, timeout: TestTime.scaled(.seconds(20))))
        #expect(closed.generation == 1 && closed.reason == .pongTimeout)
        let records = setup.probe.records
        #expect(!records.contains { $0.kind == .message }, "the message never completed")
        #expect(records.contains { $0.kind == .pongDeadlineMoved })  // the frame explained the delay at first
        let lastByte = try #require(setup.proxy.lastPassedToClient)
        #expect(setup.proxy.passed(.toClient) >= passing)
        // The close, on the client's clock, against the proxy's last byte: one pong timeout after it (the client saw
        // the byte a moment after the proxy passed it; its timer may fire late on a busy machine).
        let closedAt = setup.clientStart + .milliseconds(closed.time)
        let afterLastByte = (closedAt - lastByte).milliseconds
        #expect(afterLastByte >= timeout - 5 && afterLastByte <= timeout + TestTime.scaled(milliseconds: 150),
                "\(afterLastByte) ms")
        await setup.stop()
    }
}
#endif
