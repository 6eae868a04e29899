import Foundation
import Testing
import TetherCore
@testable import Tether
import TetherTesting

/// The client fed by a scripted path monitor: offline periods, recovery, liveness probes and monitor restarts.
@Suite struct WebSocketClientPathTests {
    let clock = ManualClock()
    let transport = InMemoryTransport()
    static let wifi = PathSnapshot(status: .satisfied, isExpensive: false, isConstrained: false, interfaces: [.wifi])
    static let cellular = PathSnapshot(
        status: .satisfied, isExpensive: true, isConstrained: false, interfaces: [.cellular]
    )
    static let offline = PathSnapshot(status: .unsatisfied, isExpensive: false, isConstrained: false, interfaces: [])

    func makeClient(monitor: ScriptedPathMonitor) throws -> (WebSocketClient, EventRecorder) {
        let configuration = WebSocketClient.Configuration(
            url: URL(string: "ws://example.test/feed")!,
            heartbeatInterval: .milliseconds(1000),
            heartbeatTimeout: .milliseconds(500),
            probeTimeout: .milliseconds(200),
            pathMonitoring: .custom { monitor },
            transport: self.transport
        )
        let client = try WebSocketClient(configuration: configuration, clock: self.clock, randomSeed: 7)
        return (client, EventRecorder(client.events))
    }

    func nextConnection() async throws -> InMemoryConnection {
        try #require(await self.transport.nextConnection())
    }

    /// Goes offline the way a real start does: the first attempt is not held back by a path report that has
    /// not arrived yet (unknown never blocks); it fails, and by then the path says unavailable.
    func startOffline(_ client: WebSocketClient, _ probe: EventRecorder) async throws {
        await client.start()
        let first = try await self.nextConnection()
        _ = await probe.record(.path) { $0.path == .unavailable }
        first.emit(.ended(.connectFailed(.unreachable)))
        #expect(await probe.state(.offline) != nil)
    }

    /// The next state change whose state satisfies `matches`.
    static func nextState(
        _ probe: EventRecorder, where matches: @escaping @Sendable (ConnectionState) -> Bool
    ) async -> ConnectionState? {
        let event = await probe.next { event in
            if case .stateChanged(let state, _) = event { return matches(state) }
            return false
        }
        guard case .stateChanged(let state, _)? = event else { return nil }
        return state
    }

    /// The sixth case of the path hint: a metered or Low Data path reaches the app in the state, so it can hold
    /// back large transfers, and the state changes when only that changes (the connection stays as it is).
    @Test func anExpensiveOrConstrainedPathIsInTheStateAndChangesIt() async throws {
        let monitor = ScriptedPathMonitor(current: Self.wifi)
        let (client, probe) = try self.makeClient(monitor: monitor)
        await client.start()
        let first = try await self.nextConnection()
        first.emit(.opened(subprotocol: nil))
        let open = try #require(await probe.state(.open))
        #expect(!open.pathIsExpensive && !open.pathIsConstrained)

        // A personal hotspot: the same Wi-Fi interface (no switch, no probe), now expensive.
        monitor.deliver(PathSnapshot(status: .satisfied, isExpensive: true, isConstrained: false, interfaces: [.wifi]))
        let meteredState = try #require(await Self.nextState(probe) { $0.pathIsExpensive })
        #expect(meteredState.phase == .open && !meteredState.pathIsConstrained)

        let lowData = PathSnapshot(status: .satisfied, isExpensive: true, isConstrained: true, interfaces: [.wifi])
        monitor.deliver(lowData)
        let constrainedState = try #require(await Self.nextState(probe) { $0.pathIsConstrained })
        #expect(constrainedState.pathIsExpensive && constrainedState.phase == .open)
        #expect(self.transport.all.count == 1)
    }

    @Test func anOutageConsumesNoAttemptsAndItsEndConnectsAtOnce() async throws {
        let monitor = ScriptedPathMonitor(current: Self.offline)
        let (client, probe) = try self.makeClient(monitor: monitor)
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
        let (client, probe) = try self.makeClient(monitor: monitor)
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
        let (client, probe) = try self.makeClient(monitor: monitor)
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
        let (client, probe) = try self.makeClient(monitor: monitor)
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
        let (client, probe) = try self.makeClient(monitor: old)
        await client.start()
        let connection = try await self.nextConnection()
        connection.emit(.opened(subprotocol: nil))
        #expect(await probe.state(.open) != nil)
        // The old monitor's first report travels through its own reader task and can come after the open state:
        // count it in first, so that the report awaited below can only be the replacement's (replacing a monitor
        // makes the path unknown until the new one reports).
        @Sendable func available(_ snapshot: EventRecorder.Snapshot) -> Int {
            snapshot.records.count { $0.kind == .path && $0.path == .available }
        }
        #expect(await probe.wait { available($0) == 1 } != nil)

        let replacement = ScriptedPathMonitor(current: Self.wifi)
        await client.monitorPath(with: replacement)
        #expect(old.isCancelled)
        old.deliver(Self.offline)
        replacement.deliver(Self.cellular)
        #expect(await probe.wait { available($0) == 2 } != nil)
        #expect(await client.state.path == .available)
        #expect(!probe.records.contains { $0.kind == .path && $0.path == .unavailable })
    }

    static let eth0 = PathSnapshot(status: .satisfied, interfaces: [.wiredEthernet], interfaceNames: ["eth0"])
    static let eth1 = PathSnapshot(status: .satisfied, interfaces: [.wiredEthernet], interfaceNames: ["eth1"])

    /// Two failed attempts: the client waits for its backoff with attempts 2.
    func failTwice(_ client: WebSocketClient, _ probe: EventRecorder) async throws {
        await client.start()
        try await self.nextConnection().emit(.ended(.connectFailed(.refused)))
        let retryAt = try #require(await probe.state(.waiting)?.retryAt)
        self.clock.advance(toMilliseconds: retryAt)
        try await self.nextConnection().emit(.ended(.connectFailed(.refused)))
        // The waiting state after the second failure, by its attempts: the first wait may be published twice (once
        // more when the path's first report arrives during it), so "the next waiting state" can still be attempt 1.
        let waiting = await Self.nextState(probe) { $0.phase == .waiting && $0.attempts == 2 }
        #expect(waiting != nil)
    }

    @Test func interfaceSwitchWhileWaitingForABackoffConnectsAtOnceWithAttemptsReset() async throws {
        let monitor = ScriptedPathMonitor(current: Self.wifi)
        let (client, probe) = try self.makeClient(monitor: monitor)
        try await self.failTwice(client, probe)
        let before = self.clock.now

        monitor.deliver(Self.cellular)
        _ = try await self.nextConnection()
        #expect(self.clock.now == before)  // no backoff wait
        let state = await client.state
        #expect(state.phase == .connecting && state.generation == 3)
        #expect(state.attempts == 0)
    }

    @Test func pathLostWhileWaitingGoesOfflineUsesNoAttemptsAndItsReturnConnectsAtOnce() async throws {
        let monitor = ScriptedPathMonitor(current: Self.wifi)
        let (client, probe) = try self.makeClient(monitor: monitor)
        try await self.failTwice(client, probe)

        monitor.deliver(Self.offline)
        let offline = try #require(await probe.state(.offline))
        #expect(offline.retryAt == nil && offline.attempts == 2)
        self.clock.advance(by: .seconds(600))  // far past the abandoned retry time
        #expect(self.transport.all.count == 2)
        #expect(await client.state.attempts == 2)

        monitor.deliver(Self.wifi)
        _ = try await self.nextConnection()
        let state = await client.state
        #expect(state.phase == .connecting && state.attempts == 0)
    }

    @Test func switchBetweenTwoInterfacesOfTheSameKindProbesAndAMissedProbeReconnectsAtOnce() async throws {
        let monitor = ScriptedPathMonitor(current: Self.eth0)
        let (client, probe) = try self.makeClient(monitor: monitor)
        await client.start()
        let first = try await self.nextConnection()
        first.emit(.opened(subprotocol: nil))
        #expect(await probe.state(.open) != nil)
        self.clock.advance(toMilliseconds: 100)

        monitor.deliver(Self.eth1)  // kinds equal, names differ
        guard case .ping? = await first.nextCommand() else {
            Issue.record("expected a probe after eth0 -> eth1")
            return
        }
        #expect(await probe.record(.ping)?.time == 100)  // at once, not at the 1000 ms interval
        self.clock.advance(toMilliseconds: 299)
        self.clock.advance(toMilliseconds: 300)  // probe deadline 100 + 200
        #expect(await first.nextCommand() == .close(code: 1001, reason: "probe_timeout"))
        let second = try await self.nextConnection()
        #expect(self.clock.now.offset == .milliseconds(300))  // reconnected at once, no backoff
        let state = await client.state
        #expect(state.generation == 2 && state.attempts == 0)
        _ = second
    }

    @Test func theSameInterfaceKindWithoutNamesIsNoSwitch() async throws {
        // A monitor that does not name interfaces: equal kinds are the same path, and cost changes probe nothing.
        let monitor = ScriptedPathMonitor(current: PathSnapshot(status: .satisfied, interfaces: [.wiredEthernet]))
        let (client, probe) = try self.makeClient(monitor: monitor)
        await client.start()
        let connection = try await self.nextConnection()
        connection.emit(.opened(subprotocol: nil))
        #expect(await probe.state(.open) != nil)
        monitor.deliver(PathSnapshot(status: .satisfied, isExpensive: true, interfaces: [.wiredEthernet]))
        _ = await probe.record(.path)
        #expect(await client.state.phase == .open)
        self.clock.advance(toMilliseconds: 999)
        #expect(connection.log.isEmpty)  // no probe: the first ping is the heartbeat's, at 1000
        self.clock.advance(toMilliseconds: 1000)
        #expect(await connection.nextCommand() == .ping(1))
    }

    @Test func stopCancelsTheMonitor() async throws {
        let monitor = ScriptedPathMonitor(current: Self.offline)
        let (client, probe) = try self.makeClient(monitor: monitor)
        try await self.startOffline(client, probe)
        await client.stop()
        #expect(monitor.isCancelled)
        let resources = await client.resources
        #expect(resources.pathMonitors == 0 && resources.timers == 0 && resources.readers == 0)
    }
}
