import Foundation
import Testing
import TetherCore
@testable import Tether
import TetherTesting

/// The client publishes connectivity in its state: "no network" and "server unreachable" apart.
@Suite struct WebSocketClientConnectivityTests {
    let clock = ManualClock()
    let transport = InMemoryTransport()

    @Test func stateTellsNoNetworkFromServerUnreachableAndOnline() async throws {
        let monitor = ScriptedPathMonitor(current: WebSocketClientPathTests.wifi)
        let configuration = WebSocketClient.Configuration(
            url: URL(string: "ws://example.test/feed")!,
            pathMonitoring: .custom { monitor },
            transport: self.transport
        )
        let client = try WebSocketClient(configuration: configuration, clock: self.clock, randomSeed: 7)
        let probe = EventRecorder(client.events)
        await client.start()
        let first = try #require(await self.transport.nextConnection())
        _ = await probe.record(.path) { $0.path == .available }
        first.emit(.ended(.handshakeRejected(status: 503, retryAfter: nil)))
        let waiting = try #require(await probe.state(.waiting))
        #expect(waiting.connectivity == .serverUnreachable(.serverError(status: 503)))
        #expect(waiting.path == .available)

        monitor.deliver(WebSocketClientPathTests.offline)
        let offline = try #require(await probe.state(.offline))
        #expect(offline.connectivity == .offline)

        await client.reconnectNow()
        let second = try #require(await self.transport.nextConnection())
        second.emit(.opened(subprotocol: nil))
        let open = try #require(await probe.state(.open))
        #expect(open.connectivity == .online)  // a real request beats the monitor's "unavailable"
        #expect(open.path == .unavailable)
        second.emit(.ended(.closedLocally))  // the in-memory peer ends it, or `stop()` would wait for its end
        await client.stop()
    }
}
