#if os(Linux)
import Foundation
import Testing
import TetherCore
import TetherTestServer
@testable import Tether

/// The client on `ContinuousClock`, whose wake-ups come from the shared event loop's timers, against the real
/// test server: pings go out after the interval, pongs keep it open, a missing pong closes at the deadline,
/// and `stop()` leaves no timer behind.
@Suite struct WebSocketClientMonotonicClockTests {
    func makeClient(_ server: TestServer, timeout: Duration) -> (WebSocketClient<ContinuousClock>, EventProbe) {
        let configuration = WebSocketClient<ContinuousClock>.Configuration(
            url: URL(string: server.url(path: "/heartbeat"))!,
            heartbeatInterval: .milliseconds(30),
            heartbeatTimeout: timeout,
            backoff: BackoffPolicy(base: 10_000, factor: 2, cap: 10_000, jitterPercent: 0)
        )
        let client = WebSocketClient(configuration: configuration)
        return (client, EventProbe(client.events))
    }

    @Test func pongsKeepTheConnectionOpenAndStopLeavesNoTimer() async throws {
        let server = try TestServer(scenario: .normal)
        let (client, probe) = self.makeClient(server, timeout: .seconds(2))
        await client.start()
        #expect(await probe.state(.open) != nil)

        let first = await probe.record(.pong)
        let second = await probe.record(.pong)
        #expect(first?.generation == 1 && second?.generation == 1)
        let gap = try #require(second).time - (try #require(first).time)
        #expect(gap >= 30)  // the next ping waits one interval after the pong
        #expect(await client.state.phase == .open)
        #expect(await client.resources.timers == 1)

        await client.stop()
        let resources = await client.resources
        #expect(resources.timers == 0 && resources.connections == 0 && resources.readers == 0)
        let pings = try #require(server.connection(1)).pingsReceived.count
        #expect(pings >= 2)
        await server.stop()
    }

    @Test func missingPongClosesOnceAtTheDeadline() async throws {
        let server = try TestServer(scenario: .noPong)
        let (client, probe) = self.makeClient(server, timeout: .milliseconds(80))
        await client.start()
        #expect(await probe.state(.open) != nil)

        let ping = try #require(await probe.record(.ping))
        let closed = try #require(await probe.record(.closed))
        #expect(closed.reason == .pongTimeout)
        #expect(closed.generation == ping.generation)
        #expect(closed.time - ping.time >= 80)  // never before the deadline
        #expect(await probe.state(.waiting) != nil)
        #expect(probe.records.filter { $0.kind == .closed }.count == 1)

        await client.stop()
        #expect(await client.resources.timers == 0)
        await server.stop()
    }
}
#endif
