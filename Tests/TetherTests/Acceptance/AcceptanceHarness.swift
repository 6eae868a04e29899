#if os(Linux)
import Foundation
import TetherCore
import TetherPOSIX
import TetherTestServer
@testable import Tether
import TetherTesting

/// The real client (socket transport, continuous clock) against the real test server on loopback.
/// `withHarness` always stops both, even when the body throws.
struct AcceptanceHarness {
    let server: TestServer
    let client: WebSocketClient
    let probe: EventRecorder

    /// Short timings for tests: ping every 50 ms, pong deadline 200 ms, backoff 40 ms ×2 up to 400 ms.
    /// Margins that are not under test are generous, so that a loaded 2-core machine cannot trip them.
    static func configuration(
        url: String,
        interval: Int = 50,
        timeout: Int = 200,
        backoff: BackoffPolicy = BackoffPolicy(
            base: .milliseconds(40), factor: 2, cap: .milliseconds(400), jitterPercent: 50),
        retryLaterDelay: Int = 300,
        transport: (any WebSocketTransport)? = nil,
        recordsMessages: Bool = false
    ) -> WebSocketClient.Configuration {
        var configuration = WebSocketClient.Configuration(
            url: URL(string: url)!,
            heartbeatInterval: .milliseconds(interval),
            heartbeatTimeout: .milliseconds(timeout),
            connectTimeout: .seconds(10),  // not under test here; generous so a loaded machine cannot trip it
            backoff: backoff,
            retryLaterDelay: .milliseconds(retryLaterDelay),
            closeTimeout: .milliseconds(300),
            pathMonitoring: .none,
            transport: transport ?? SocketTransport(loop: Self.loop)
        )
        configuration.eventLoop = Self.loop
        configuration.recordsMessages = recordsMessages
        return configuration
    }

    /// The acceptance suite's own event loop: its real-time deadlines must not wait behind other suites'
    /// work on the shared loop (a debug build decoding mebibytes there, say). Lives for the whole process.
    static let loop: EventLoop = {
        do {
            return try EventLoop(name: "tether-acceptance")
        } catch {
            preconditionFailure("cannot start the acceptance event loop: \(error)")
        }
    }()

    /// Every record of `kind` seen so far.
    func records(_ kind: LogRecord.Kind) -> [LogRecord] {
        self.probe.records.filter { $0.kind == kind }
    }

    /// The client's resources once `stop()` has returned: all must be zero.
    var leftovers: Int {
        get async {
            let resources = await self.client.resources
            return resources.connections + resources.readers + resources.timers + resources.pathMonitors
                + resources.writers
        }
    }
}

/// Starts a server with `scenario` (per connection) and a client for `path`, runs `body`, then stops both.
func withHarness(
    path: String = "/feed",
    configure: (String) -> WebSocketConfiguration = { AcceptanceHarness.configuration(url: $0) },
    scenario: @escaping @Sendable (ConnectionContext) -> Scenario,
    _ body: (AcceptanceHarness) async throws -> Void
) async throws {
    let server = try TestServer(scenario: scenario)
    let client = try WebSocketClient(configuration: configure(server.url(path: path)), randomSeed: 1)
    let harness = AcceptanceHarness(server: server, client: client, probe: EventRecorder(client.events))
    do {
        try await body(harness)
    } catch {
        await client.stop()
        await server.stop()
        throw error
    }
    await client.stop()
    await server.stop()
}

func withHarness(
    path: String = "/feed",
    configure: (String) -> WebSocketConfiguration = { AcceptanceHarness.configuration(url: $0) },
    scenario: Scenario,
    _ body: (AcceptanceHarness) async throws -> Void
) async throws {
    try await withHarness(path: path, configure: configure, scenario: { _ in scenario }, body)
}
#endif
