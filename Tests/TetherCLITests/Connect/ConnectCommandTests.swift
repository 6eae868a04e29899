import Foundation
import Testing
import TetherTestServer
@testable import TetherCLI

@Suite struct ConnectCommandTests {
    @Test func countStopsAfterFiveMessagesAndEventsAreJSONLWithoutSecrets() async throws {
        let server = try TestServer(scenario: .send(count: 20, size: 12, everyMilliseconds: 2))
        let captured = CapturedIO()
        let status = await TetherCommand.run([
            "connect", server.url(path: "/feed?token=s3cret"), "--header", "Authorization: Bearer hunter2",
            "--count", "5", "--events", "jsonl", "--no-path-monitor",
        ], io: captured.io)
        await server.stop()
        #expect(status == 0, "\(captured.error)")
        let events = try captured.outputLines.map { line in
            try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
        let allowed: Set<String> = [
            "t", "gen", "event", "from", "to", "reason", "code", "rtt_ms", "attempt", "delay_ms", "bytes", "path",
        ]
        #expect(events.allSatisfy { Set($0.keys).isSubset(of: allowed) })
        #expect(events.map { $0["event"] as? String }.prefix(2) == ["connecting", "opened"])
        let messages = events.filter { $0["event"] as? String == "message" }
        #expect(messages.count >= 5)
        #expect(messages.allSatisfy { $0["bytes"] as? Int == 12 && $0["gen"] as? Int == 1 })
        #expect(events.last?["event"] as? String == "stopped")
        let everything = captured.output + captured.error
        #expect(!everything.contains("s3cret") && !everything.contains("hunter2") && !everything.contains("token"))
        #expect(!captured.output.contains("0..........."))  // no payloads in jsonl mode
        // The server saw the header: it was sent, only never shown.
        #expect(server.connection(1)?.request?.header("Authorization") == "Bearer hunter2")
    }

    @Test func receivedMessagesArePrintedUnlessQuiet() async throws {
        let server = try TestServer(scenario: .send(count: 3, size: 4))
        let loud = CapturedIO()
        #expect(await TetherCommand.run(
            ["connect", server.url(), "--count", "3", "--no-path-monitor"], io: loud.io) == 0)
        #expect(loud.outputLines == ["0...", "1...", "2..."])
        #expect(loud.error.contains(" open gen=1 "))
        let quiet = CapturedIO()
        #expect(await TetherCommand.run(
            ["connect", server.url(), "--count", "3", "--quiet", "--no-path-monitor"], io: quiet.io) == 0)
        #expect(quiet.output.isEmpty)
        await server.stop()
    }

    @Test func stdinLinesAreSentAndTheEchoPrinted() async throws {
        let server = try TestServer(scenario: Scenario.echo.recordingPayloads())
        let captured = CapturedIO()
        captured.type("hello")  // typed before the connection opened: it waits for the open
        captured.type("world")
        let status = await TetherCommand.run(
            ["connect", server.url(), "--count", "2", "--no-path-monitor"], io: captured.io)
        await server.stop()
        #expect(status == 0)
        #expect(captured.outputLines == ["hello", "world"])
        let received = server.connection(1)?.messages.compactMap { message in
            message.payload.map { String(decoding: $0, as: UTF8.self) }
        }
        #expect(received == ["hello", "world"])
    }

    @Test func endOfInputIsACleanExit() async throws {
        let server = try TestServer(scenario: .normal)
        let captured = CapturedIO()
        captured.endInput()
        #expect(await TetherCommand.run(["connect", server.url(), "--no-path-monitor"], io: captured.io) == 0)
        await server.stop()
    }

    @Test func aHeaderTheHandshakeSetsItselfIsABadArgument() async throws {
        let captured = CapturedIO()
        captured.endInput()
        let status = await TetherCommand.run(
            ["connect", "ws://127.0.0.1:9/", "--header", "Sec-WebSocket-Key: SECRET", "--no-path-monitor"],
            io: captured.io)
        #expect(status == 2)
        #expect(captured.error.contains("WebSocketConfiguration.headers: Sec-WebSocket-Key"))
        #expect(!captured.error.contains("SECRET"))
    }

    @Test func unauthorizedExitsThreeWithTheReason() async throws {
        let server = try TestServer(scenario: .reject(status: 401))
        let captured = CapturedIO()
        let status = await TetherCommand.run(
            ["connect", server.url(), "--events", "jsonl", "--no-path-monitor"], io: captured.io)
        await server.stop()
        #expect(status == 3)
        #expect(captured.error.contains("stopped: handshake_rejected 401"))
        let closed = captured.outputLines.first { $0.contains(#""event":"closed""#) }
        #expect(closed?.contains(#""reason":"handshake_rejected","code":401"#) == true)
    }

    @Test func durationEndsARunThatReceivesNothing() async throws {
        let server = try TestServer(scenario: .normal)
        let captured = CapturedIO()
        #expect(await TetherCommand.run(
            ["connect", server.url(), "--duration", "50", "--no-path-monitor"], io: captured.io) == 0)
        await server.stop()
        #expect(server.connections.count == 1)
    }
}
