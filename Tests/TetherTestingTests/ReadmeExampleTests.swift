import Foundation
import Testing
import Tether
import TetherCore
import TetherTesting

/// The README's "Testing your own code" example, compiled and run: the code between the markers is the README's
/// block, character for character (`theReadmeShowsThisExampleAsItIs` checks), so that the README stays true.
@Suite struct ReadmeExampleTests {
    // README example begin
    @Test func aSilentServerIsDetectedAndTheClientReconnects() async throws {
        let clock = ManualClock()                                  // time moves only when the test says
        let transport = InMemoryTransport()                        // no sockets: the test plays the network
        let configuration = WebSocketConfiguration(
            url: URL(string: "wss://example.com/feed")!,
            heartbeatInterval: .seconds(15), heartbeatTimeout: .seconds(5),
            pathMonitoring: .none, transport: transport
        )
        let client = try WebSocketClient(configuration: configuration, clock: clock)
        let recorder = EventRecorder(client.events)                // before start(): it reads from now on

        let first = try await transport.open(client, recorder)     // start; connection 1 opens
        clock.advance(by: .seconds(15))                            // one heartbeat interval: a ping goes out
        #expect(await first.nextCommand() == .ping(1))
        clock.advance(by: .seconds(5))                             // no pong by the deadline
        #expect(await first.nextCommand() == .close(code: 1001, reason: "pong_timeout"))
        first.emit(.ended(.closedLocally))
        let waiting = try #require(await recorder.state(.waiting)) // a retry after backoff and jitter
        #expect(waiting.connectivity == .serverUnreachable(.timeout))

        clock.advance(toMilliseconds: try #require(waiting.retryAt))  // the backoff passes, no sleeping
        let second = try #require(await transport.nextConnection())
        second.emit(.opened(subprotocol: nil))
        #expect(await recorder.state(.open)?.generation == 2)

        async let stopped: Void = client.stop()
        #expect(await second.nextCommand() == .close(code: 1000, reason: "user_stopped"))
        second.emit(.ended(.closedLocally))
        await stopped
    }
    // README example end

    @Test func theReadmeShowsThisExampleAsItIs() throws {
        let here = URL(fileURLWithPath: #filePath)
        let source = try String(contentsOf: here, encoding: .utf8)
        let readme = try String(
            contentsOf: here.deletingLastPathComponent().appendingPathComponent("../../README.md").standardized,
            encoding: .utf8
        )
        let lines = source.split(separator: "\n", omittingEmptySubsequences: false)
        let begin = try #require(lines.firstIndex { $0.hasSuffix("// README example begin") })
        let end = try #require(lines.firstIndex { $0.hasSuffix("// README example end") })
        // The README shows the test unindented by the suite's four spaces.
        let example = lines[(begin + 1)..<end].map { $0.hasPrefix("    ") ? $0.dropFirst(4) : $0 }
            .joined(separator: "\n")
        #expect(readme.contains(example), "README.md's \"Testing your own code\" block differs from this test")
    }
}
