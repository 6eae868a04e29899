#if os(Linux)
import Foundation
import Tether
import TetherCore
import TetherPOSIX
import TetherTestServer

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
    func mark(_ label: String) {
        guard let origin = self.clientOrigin else { return }
        self.marks.append(StepMark(time: origin.duration(to: .now).milliseconds, label: label))
    }

    func note(_ key: String, _ value: String) {
        self.evidence.append(Evidence(key: key, value: value))
    }

    // MARK: Resources

    /// Starts an embedded test server that applies `scenario` to every connection.
    func server(_ scenario: Scenario) throws(CheckFailure) -> TestServer {
        self.serverDescription = scenario.description
        return try self.server(describedAs: scenario.description) { _ in scenario }
    }

    /// Starts an embedded test server that picks a scenario per connection.
    func server(
        describedAs description: String, _ pick: @escaping @Sendable (ConnectionContext) -> Scenario
    ) throws(CheckFailure) -> TestServer {
        self.serverDescription = description
        let server: TestServer
        do {
            server = try TestServer(scenario: pick)
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
        configure: (inout WebSocketClient<ContinuousClock>.Configuration) -> Void = { _ in }
    ) throws(CheckFailure) -> (WebSocketClient<ContinuousClock>, EventRecorder) {
        guard let url = URL(string: url) else { throw .setup("bad URL \(url)") }
        var configuration = WebSocketClient<ContinuousClock>.Configuration(
            url: url,
            heartbeatInterval: .milliseconds(self.timing.interval),
            heartbeatTimeout: .milliseconds(heartbeatTimeout ?? self.timing.timeout),
            connectTimeout: .seconds(10),  // not under test; generous so that a busy machine cannot trip it
            probeTimeout: .milliseconds(self.timing.timeout),
            backoff: BackoffPolicy(base: self.timing.backoffBase, factor: 2, cap: self.timing.backoffCap),
            closeTimeout: .milliseconds(500),
            pathMonitoring: pathMonitoring,
            transport: transport ?? SocketTransport(loop: Self.loop)
        )
        configuration.eventLoop = Self.loop
        configuration.recordsMessages = true  // the report's timeline shows traffic
        configure(&configuration)
        if self.clientOrigin == nil { self.clientOrigin = ContinuousClock.now }
        let client: WebSocketClient<ContinuousClock>
        do {
            client = try WebSocketClient(configuration: configuration)
        } catch {
            throw .setup("\(error)")
        }
        let recorder = EventRecorder(client.events)
        self.recorder = self.recorder ?? recorder
        self.cleanups.append { await client.stop() }
        return (client, recorder)
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

    /// Stops every client and server this run made, newest first.
    func cleanUp() async {
        for step in self.cleanups.reversed() {
            await step()
        }
        self.cleanups.removeAll()
    }
}
#endif
