#if os(Linux)
import Testing
@testable import TetherPOSIX
@testable import TetherTestServer
@testable import TetherWire

/// The scenario's timing on a manual clock: the server's loop reads `ManualLoopClock`, so each timed action happens
/// exactly when the test moves the clock, and the record's times are the clock's. The test waits on the loop
/// (`settle`) and on the records, never on real time, so these hold on a machine under any load.
@Suite(.timeLimit(.minutes(1)))
struct TestServerTimingTests {
    private static func server(
        handshakeTimeout: Duration = .seconds(10), clock: ManualLoopClock, scenario: Scenario
    ) throws -> TestServer {
        var configuration = TestServer.Configuration(handshakeTimeout: handshakeTimeout)
        configuration.clock = .manual(clock)
        return try TestServer(configuration: configuration, scenario: scenario)
    }

    /// Advances the clock and returns once the server's loop has fired what became due.
    private static func advance(_ clock: ManualLoopClock, to milliseconds: Int, on server: TestServer) async {
        clock.advance(toMilliseconds: milliseconds)
        await server.loop.settle()
    }

    @Test func serverPingsGoOutAtEachIntervalFromTheOpenAndNotBefore() async throws {
        let clock = ManualLoopClock()
        let server = try Self.server(clock: clock, scenario: .serverPings(everyMilliseconds: 100))
        _ = try await RawClient.open(server, answersPings: true)
        await server.loop.settle()  // the open scheduled the first ping

        await Self.advance(clock, to: 99, on: server)
        #expect(try await server.waitForConnection(1).pingsSent.isEmpty)
        await Self.advance(clock, to: 100, on: server)
        var record = try await server.waitForConnection(1) { $0.pongsReceived.count == 1 }
        #expect(record.pingsSent.map(\.at) == [100])

        await Self.advance(clock, to: 199, on: server)
        #expect(try await server.waitForConnection(1).pingsSent.count == 1)
        await Self.advance(clock, to: 200, on: server)
        _ = try await server.waitForConnection(1) { $0.pongsReceived.count == 2 }
        await Self.advance(clock, to: 300, on: server)
        record = try await server.waitForConnection(1) { $0.pongsReceived.count == 3 }
        #expect(record.openedAt == 0)
        #expect(record.pingsSent.map(\.at) == [100, 200, 300])
        #expect(record.pongsReceived.map(\.payload) == record.pingsSent.map(\.payload))
        await server.stop()
    }

    @Test func aDelayedPongGoesOutExactlyTheDelayAfterThePing() async throws {
        let clock = ManualLoopClock()
        let server = try Self.server(clock: clock, scenario: .pongDelay(milliseconds: 120))
        var (client, _) = try await RawClient.open(server)
        await Self.advance(clock, to: 30, on: server)

        try await client.ping([1, 2])
        _ = try await server.waitForConnection(1) { $0.pingsReceived.count == 1 }
        await server.loop.settle()  // the ping's pong is scheduled
        await Self.advance(clock, to: 149, on: server)
        #expect(try await server.waitForConnection(1).pongsSent.isEmpty)
        await Self.advance(clock, to: 150, on: server)
        #expect(await client.nextMessage() == .pong([1, 2]))

        let record = try await server.waitForConnection(1) { $0.pongsSent.count == 1 }
        #expect(record.pingsReceived.map(\.at) == [30])
        #expect(record.pongsSent.map(\.at) == [150])
        await server.stop()
    }

    @Test func closeAfterSendsTheCloseAtItsTimeAndResetsAfterTheCloseTimeout() async throws {
        let clock = ManualLoopClock()
        var scenario = Scenario.close(afterMilliseconds: 50, code: 4001, reason: "bye")
        scenario.closeTimeoutMilliseconds = 1_000
        let server = try Self.server(clock: clock, scenario: scenario)
        var (client, _) = try await RawClient.open(server)
        await server.loop.settle()

        await Self.advance(clock, to: 49, on: server)
        #expect(try await server.waitForConnection(1).closeSent == nil)
        await Self.advance(clock, to: 50, on: server)
        #expect(await client.nextMessage() == .close(code: 4001, reason: "bye"))

        // The client never answers: the server waits its close timeout, then resets.
        await Self.advance(clock, to: 1_049, on: server)
        #expect(try await server.waitForConnection(1).end == nil)
        await Self.advance(clock, to: 1_050, on: server)
        let (messages, end) = await client.readToEnd()
        #expect(messages.isEmpty)
        #expect(end == .failed(.reset))
        let record = try await server.waitForEnd(ofConnection: 1)
        #expect(record.closeSent?.at == 50)
        #expect(record.end?.reason == .closeTimedOut)
        #expect(record.end?.at == 1_050)
        await server.stop()
    }

    @Test func anIncompleteRequestIsClosedExactlyAtTheHandshakeTimeout() async throws {
        let clock = ManualLoopClock()
        let server = try Self.server(handshakeTimeout: .milliseconds(200), clock: clock, scenario: .normal)
        let connection = try await TCPConnection.connect(host: server.host, port: server.port, timeout: .seconds(5))
        try await connection.send(Array("GET / HTTP/1.1\r\n".utf8))
        _ = try await server.waitForConnection(1)
        await server.loop.settle()  // the accept armed the handshake timer

        await Self.advance(clock, to: 199, on: server)
        #expect(try await server.waitForConnection(1).end == nil)
        await Self.advance(clock, to: 200, on: server)
        let record = try await server.waitForEnd(ofConnection: 1)
        #expect(record.end?.reason == .handshakeTimedOut)
        #expect(record.end?.at == 200)
        connection.reset()
        await server.stop()
    }
}
#endif
