#if os(Linux)
import Foundation
import Testing
@testable import TetherPOSIX
@testable import TetherTestServer
@testable import TetherWire

/// `TestServer.close(connection:code:reason:)` and `reset(connection:)`: the test decides when the server closes or
/// resets a connection, between two of its own steps, instead of after a scenario's fixed time.
@Suite(.timeLimit(.minutes(1)))
struct TestServerControlTests {
    @Test func closeSendsTheCodeNowAndTheServerThenRecordsButNoLongerEchoes() async throws {
        let server = try TestServer(scenario: Scenario.echo.recordingPayloads())
        var (client, _) = try await RawClient.open(server)
        try await client.send(text: "before")
        #expect(await client.nextMessage() == .text("before"))

        #expect(try await server.close(connection: 1, code: 4000, reason: "now"))
        #expect(await client.nextMessage() == .close(code: 4000, reason: "now"))
        #expect(try await server.close(connection: 1, code: 1000) == false)  // closing already: nothing more
        try await client.send(text: "after")
        try await client.close(code: 4000)
        let (messages, end) = await client.readToEnd()
        #expect(messages.isEmpty && end == .endOfStream)

        let record = try await server.waitForEnd(ofConnection: 1)
        #expect(record.messages.map(\.payload) == [Array("before".utf8), Array("after".utf8)])
        #expect(record.sentMessageCount == 1)
        #expect(record.closeSent?.code == 4000 && record.closeSent?.reason == "now")
        #expect(record.end?.reason == .closeHandshakeCompleted(initiatedByServer: true))
        #expect(try await server.close(connection: 1, code: 1000) == false)  // ended
        await server.stop()
    }

    @Test func resetDropsTheConnectionNowAndIsRecordedAsTheServers() async throws {
        let server = try TestServer(scenario: .echo)
        var (client, _) = try await RawClient.open(server)
        try await client.send(text: "hello")
        #expect(await client.nextMessage() == .text("hello"))

        #expect(await server.reset(connection: 1))
        let (messages, end) = await client.readToEnd()
        #expect(messages.isEmpty && end == .failed(.reset))
        let record = try await server.waitForEnd(ofConnection: 1)
        #expect(record.end?.reason == .serverReset)
        #expect(await server.reset(connection: 1) == false)
        await server.stop()
    }

    @Test func aConnectionThatIsNotThereOrACodeThatMayNotBeSentIsRefused() async throws {
        let server = try TestServer(scenario: .normal)
        #expect(try await server.close(connection: 1, code: 1000) == false)
        #expect(await server.reset(connection: 7) == false)
        await #expect(throws: TestServerError.invalidArgument("close code 1005 may not be sent")) {
            try await server.close(connection: 1, code: 1005)
        }
        await #expect(throws: TestServerError.invalidArgument("close reason must fit in 123 bytes")) {
            try await server.close(connection: 1, code: 1000, reason: String(repeating: "x", count: 124))
        }
        await server.stop()
        #expect(try await server.close(connection: 1, code: 1000) == false)  // stopped: the loop is gone
    }
}
#endif
