import Foundation
import Testing
import TetherCore
@testable import Tether

/// The client fed by a scripted path monitor: offline periods, recovery, liveness probes and monitor restarts.
@Suite struct WebSocketClientPathTests {
    let clock = ManualClock()
    let transport = InMemoryTransport()
    static let wifi = PathSnapshot(status: .satisfied, isExpensive: false, isConstrained: false, interfaces: [.wifi])
    static let cellular = PathSnapshot(status: .satisfied, isExpensive: true, isConstrained: false, interfaces: [.cellular])
    static let offline = PathSnapshot(status: .unsatisfied, isExpensive: false, isConstrained: false, interfaces: [])

    func makeClient(monitor: ScriptedPathMonitor) -> (WebSocketClient<ManualClock>, EventProbe) {
        let configuration = WebSocketClient<ManualClock>.Configuration(
            url: URL(string: "ws://example.test/feed")!,
            heartbeatInterval: .milliseconds(1000),
            heartbeatTimeout: .milliseconds(500),
            probeTimeout: .milliseconds(200),
            pathMonitoring: .custom { monitor },
            transport: self.transport
        )
        let client = WebSocketClient(configuration: configuration, clock: self.clock, randomSeed: 7)
        return (client, EventProbe(client.events))
    }

    func nextConnection() async throws -> InMemoryConnection {
        try #require(await self.transport.nextConnection())
    }

    /// Goes offline the way a real start does: the first attempt is not held back by a path report that has
    /// not arrived yet (unknown never blocks); it fails, and by then the path says unavailable.
    func startOffline(_ client: WebSocketClient<ManualClock>, _ probe: EventProbe) async throws {
        await client.start()
        let first = try await self.nextConnection()
        _ = await probe.record(.path) { $0.path == .unavailable }
        first.emit(.ended(.connectFailed(.unreachable)))
        #expect(await probe.state(.offline) != nil)
    }

    @Test func anOutageConsumesNoAttemptsAndItsEndConnectsAtOnce() async throws {
        let monitor = ScriptedPathMonitor(current: Self.offline)
        let (client, probe) = self.makeClient(monitor: monitor)
        try await self.startOffline(client, probe)
        self.clock.advance(by: .seconds(600))
        #expect(self.transport.all.count == 1)
        #expect(await client.state.attempts == 0)

        monitor.deliver(Self.wifi)
        _ = try await self.nextConnection()
        #expect(self.transport.all.count == 2)
        let state = await client.state
        #expect(state.phase == .connecting)
        #expect(state.path == .available)
        #expect(state.attempts == 0)
    }

    @Test func pathReturningWhileOpenSendsAnImmediateProbeAndAMissedProbeReconnects() async throws {
        let monitor = ScriptedPathMonitor(current: Self.wifi)
        let (client, probe) = self.makeClient(monitor: monitor)
        await client.start()
        let first = try await self.nextConnection()
        first.emit(.opened(subprotocol: nil))
        #expect(await probe.state(.open) != nil)

        monitor.deliver(Self.offline)
        _ = await probe.record(.path) { $0.path == .unavailable }
        #expect(await client.state.phase == .open)  // the hint never closes a working connection
        self.clock.advance(toMilliseconds: 300)
        monitor.deliver(Self.wifi)
        guard case .ping? = await first.nextCommand() else {
            Issue.record("expected an immediate liveness probe")
            return
        }
        self.clock.advance(toMilliseconds: 500)  // probe deadline is 300 + 200
        #expect(await first.nextCommand() == .close(code: 1001, reason: "probe_timeout"))
        _ = try await self.nextConnection()
        #expect(await client.state.generation == 2)
    }

    @Test func interfaceSwitchWhileOpenProbesAndAnAnsweredProbeKeepsTheConnection() async throws {
        let monitor = ScriptedPathMonitor(current: Self.wifi)
        let (client, probe) = self.makeClient(monitor: monitor)
        await client.start()
        let connection = try await self.nextConnection()
        connection.emit(.opened(subprotocol: nil))
        #expect(await probe.state(.open) != nil)

        monitor.deliver(Self.cellular)
        guard case .ping(let id)? = await connection.nextCommand() else {
            Issue.record("expected a probe after the interface switch")
            return
        }
        self.clock.advance(toMilliseconds: 50)
        connection.emit(.pong(id: id))
        #expect(await probe.record(.pong)?.rtt == 50)
        self.clock.advance(toMilliseconds: 400)
        let state = await client.state
        #expect(state.phase == .open && state.generation == 1)
        #expect(!connection.log.contains { if case .close = $0 { true } else { false } })
    }

    @Test func theSamePathTwiceChangesNothingMore() async throws {
        let monitor = ScriptedPathMonitor(current: Self.offline, filtersRepeats: false)
        let (client, probe) = self.makeClient(monitor: monitor)
        try await self.startOffline(client, probe)
        monitor.deliver(Self.wifi)
        _ = try await self.nextConnection()
        monitor.deliver(Self.wifi)
        monitor.deliver(Self.wifi)
        monitor.deliver(Self.offline)
        _ = await probe.record(.path) { $0.path == .unavailable }
        let pathRecords = probe.records.filter { $0.kind == .path }
        #expect(self.transport.all.count == 2)
        #expect(await client.state.phase == .connecting)
        // unavailable, available, unavailable: the repeated deliveries added nothing.
        #expect(pathRecords.map(\.path) == [.unavailable, .available, .unavailable])
    }

    @Test func aReplacedMonitorsLateDeliveriesAreIgnored() async throws {
        let old = ScriptedPathMonitor(current: Self.wifi)
        let (client, probe) = self.makeClient(monitor: old)
        await client.start()
        let connection = try await self.nextConnection()
        connection.emit(.opened(subprotocol: nil))
        #expect(await probe.state(.open) != nil)

        let replacement = ScriptedPathMonitor(current: Self.wifi)
        await client.monitorPath(with: replacement)
        #expect(old.isCancelled)
        old.deliver(Self.offline)
        replacement.deliver(Self.cellular)
        _ = await probe.record(.path) { $0.path == .available }
        #expect(await client.state.path == .available)
        #expect(!probe.records.contains { $0.kind == .path && $0.path == .unavailable })
    }

    @Test func stopCancelsTheMonitor() async throws {
        let monitor = ScriptedPathMonitor(current: Self.offline)
        let (client, probe) = self.makeClient(monitor: monitor)
        try await self.startOffline(client, probe)
        await client.stop()
        #expect(monitor.isCancelled)
        let resources = await client.resources
        #expect(resources.pathMonitors == 0 && resources.timers == 0 && resources.readers == 0)
    }
}
