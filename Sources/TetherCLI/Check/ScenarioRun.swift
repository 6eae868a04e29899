#if os(Linux)
import Foundation
import Tether
import TetherCore
import TetherPOSIX
import TetherTestServer
import TetherTesting

/// The context of one running scenario: makes its server and client, collects checks and evidence, and
/// cleans up everything it made, whatever happened.
final class ScenarioRun {
    let timing: CheckTiming
    private(set) var checks: [CheckResult] = []
    private(set) var evidence: [Evidence] = []
    private(set) var serverDescription = ""
    /// The client whose timeline the report shows.
    private(set) var recorder: EventRecorder?
    private var cleanups: [@Sendable () async -> Void] = []
    /// When the first client was created: the origin of its record times (within a fraction of a millisecond).
    private var clientOrigin: ContinuousClock.Instant?
    private(set) var marks: [StepMark] = []

    init(timing: CheckTiming) {
        self.timing = timing
    }

    /// The check's own event loop for its clients and their sockets, so that its timings do not depend on
    /// whatever else the process runs on the shared loop (the test suite, when the check runs in-process).
    static let loop: EventLoop = {
        do {
            return try EventLoop(name: "tether-check")
        } catch {
            preconditionFailure("cannot start the check's event loop: \(error)")
        }
    }()

    // MARK: Checks and evidence

    /// Records an expectation. `detail` says what was measured.
    func expect(_ condition: Bool, _ name: String, _ detail: @autoclosure () -> String = "") {
        self.checks.append(CheckResult(name: name, passed: condition, detail: detail()))
    }

    /// Records that `value` lies in `range` (a timing, a delay).
    func expect(_ value: Int?, in range: ClosedRange<Int>, _ name: String, unit: String = "ms") {
        let shown = value.map { "\($0) \(unit)" } ?? "missing"
        self.expect(value.map(range.contains) ?? false, name,
                    "\(shown), expected \(range.lowerBound)...\(range.upperBound) \(unit)")
    }

    /// Places one of the scenario's own steps on the timeline, at the current time.
    /// - Returns: that time, in ms since the first client was created (nil before there is one).
    @discardableResult
    func mark(_ label: String) -> Int? {
        guard let origin = self.clientOrigin else { return nil }
        let time = origin.duration(to: .now).milliseconds
        self.marks.append(StepMark(time: time, label: label))
        return time
    }

    /// Places a step that happened at `time` (ms since the first client was created) on the timeline.
    func mark(_ label: String, at time: Int) {
        self.marks.append(StepMark(time: time, label: label))
    }

    func note(_ key: String, _ value: String) {
        self.evidence.append(Evidence(key: key, value: value))
    }

    // MARK: Resources

    /// Starts an embedded test server that applies `scenario` to every connection (over TLS with `tls`).
    func server(_ scenario: Scenario, tls: TestServerTLS? = nil) throws(CheckFailure) -> TestServer {
        let description = scenario.description + (tls == nil ? "" : ", over TLS")
        return try self.server(describedAs: description, tls: tls) { _ in scenario }
    }

    /// Starts an embedded test server that picks a scenario per connection.
    func server(
        describedAs description: String, tls: TestServerTLS? = nil,
        _ pick: @escaping @Sendable (ConnectionContext) -> Scenario
    ) throws(CheckFailure) -> TestServer {
        self.serverDescription = description
        let server: TestServer
        do {
            server = try TestServer(configuration: .init(tls: tls), scenario: pick)
        } catch {
            throw .setup("test server: \(error)")
        }
        self.cleanups.append { await server.stop() }
        return server
    }

    /// A loopback port with no listener: a server is started for its port and stopped at once.
    func refusedPort() async throws(CheckFailure) -> Int {
        let server: TestServer
        do {
            server = try TestServer(scenario: .normal)
        } catch {
            throw .setup("reserving a port: \(error)")
        }
        let port = server.port
        await server.stop()
        self.serverDescription = "no listener on port \(port)"
        return port
    }

    /// A client with the check's short timings; its events are recorded for waits and the report.
    /// - Parameter heartbeatTimeout: overrides the check's pong timeout (ms) for a scenario that does not test it.
    func client(
        url: String,
        transport: (any WebSocketTransport)? = nil,
        pathMonitoring: PathMonitoring = .none,
        heartbeatTimeout: Int? = nil,
        tls: TLSOptions = TLSOptions(),
        configure: (inout WebSocketClient.Configuration) -> Void = { _ in }
    ) throws(CheckFailure) -> (WebSocketClient, EventRecorder) {
        let client = try self.makeClient(url: url, transport: transport, pathMonitoring: pathMonitoring) {
            if let heartbeatTimeout { $0.heartbeatTimeout = .milliseconds(heartbeatTimeout) }
            $0.tls = tls
            configure(&$0)
        }
        return (client, self.record(client.events))
    }

    /// A client with the check's short timings, then whatever `configure` changes, whose events nobody reads yet: the
    /// scenario reads them itself, and hands what the report should show to `record(_:)`.
    func makeClient(
        url: String,
        transport: (any WebSocketTransport)? = nil,
        pathMonitoring: PathMonitoring = .none,
        configure: (inout WebSocketConfiguration) -> Void = { _ in }
    ) throws(CheckFailure) -> WebSocketClient {
        guard let url = URL(string: url) else { throw .setup("bad URL \(url)") }
        var configuration = WebSocketClient.Configuration(
            url: url,
            heartbeatInterval: .milliseconds(self.timing.interval),
            heartbeatTimeout: .milliseconds(self.timing.timeout),
            connectTimeout: .seconds(10),  // not under test; generous so that a busy machine cannot trip it
            probeTimeout: .milliseconds(self.timing.timeout),
            backoff: BackoffPolicy(
                base: .milliseconds(self.timing.backoffBase), factor: 2, cap: .milliseconds(self.timing.backoffCap)),
            closeTimeout: .milliseconds(500),
            pathMonitoring: pathMonitoring,
            transport: transport ?? SocketTransport(loop: Self.loop)
        )
        configuration.eventLoop = Self.loop
        configuration.recordsMessages = true  // the report's timeline shows traffic
        configure(&configuration)
        if self.clientOrigin == nil { self.clientOrigin = ContinuousClock.now }
        let client: WebSocketClient
        do {
            client = try WebSocketClient(configuration: configuration)
        } catch {
            throw .setup("\(error)")
        }
        self.cleanups.append { await client.stop() }
        return client
    }

    /// Records `events` (a client's, or what a scenario's own reader passes on) for waits; the first recorder made is
    /// the timeline the report shows.
    func record(_ events: some AsyncSequence<WebSocketEvent, Never> & Sendable) -> EventRecorder {
        let recorder = EventRecorder(events)
        self.recorder = self.recorder ?? recorder
        return recorder
    }

    /// Says what the scenario's peer does, when it is not the embedded server.
    func describeServer(_ description: String) {
        self.serverDescription = description
    }

    /// Starts sampling the process's resident memory until the run cleans up.
    func residentMemory() throws(CheckFailure) -> ResidentMemory {
        guard let memory = ResidentMemory() else { throw .setup("cannot read /proc/self/statm") }
        self.cleanups.append { memory.stop() }
        return memory
    }

    /// A raw WebSocket peer on loopback that floods pings and does not read; closed when the run cleans up.
    func pingFloodPeer() throws(CheckFailure) -> PingFloodPeer {
        let peer = try PingFloodPeer()
        self.describeServer("raw peer: 101, then \(PingFloodPeer.payloadSize)-byte pings as fast as the socket "
            + "takes them, reading nothing until its writes stall")
        self.cleanups.append { peer.close() }
        return peer
    }

    /// Runs a cleanup step before the others (they run in reverse order of registration).
    func onCleanup(_ step: @escaping @Sendable () async -> Void) {
        self.cleanups.append(step)
    }

    /// Waits for `what` on the recorder with the check's wait limit.
    @discardableResult
    func wait(
        _ recorder: EventRecorder, _ what: String,
        until condition: @escaping @Sendable (EventRecorder.Snapshot) -> Bool
    ) async throws(CheckFailure) -> EventRecorder.Snapshot {
        guard let snapshot = await recorder.wait(timeout: self.timing.waitLimit, until: condition) else {
            throw .timedOut(what)  // or the client's events ended first
        }
        return snapshot
    }

    /// Waits for the server's records with the check's wait limit.
    @discardableResult
    func wait(
        _ server: TestServer, _ what: String,
        until condition: @escaping @Sendable ([ConnectionRecord]) -> Bool
    ) async throws(CheckFailure) -> [ConnectionRecord] {
        do {
            return try await server.waitUntil(timeout: self.timing.waitLimit, condition)
        } catch {
            throw .timedOut("\(what) (server: \(error))")
        }
    }

    /// Looks at `condition` every millisecond until it holds, within the check's wait limit: for a state that nothing
    /// announces to the scenario (the client tells only the consumer of its events that it held reading, and a
    /// scenario that tests the hold must not read them).
    func poll(_ what: String, until condition: () -> Bool) async throws(CheckFailure) {
        let deadline = ContinuousClock.now + self.timing.waitLimit
        while !condition() {
            guard ContinuousClock.now < deadline else { throw .timedOut(what) }
            try? await Task.sleep(for: .milliseconds(1))
        }
    }

    /// Stops every client and server this run made, newest first.
    func cleanUp() async {
        for step in self.cleanups.reversed() {
            await step()
        }
        self.cleanups.removeAll()
    }
}
#endif
