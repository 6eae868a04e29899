import Foundation
import Testing
@testable import Tether
import TetherCore
import TetherTesting

/// The client between a transport's timings and the records, on a manual clock: what the connection tells when it
/// opens goes on the `opened` record with the greeting timed on the client's clock, and at the connect deadline the
/// client asks the connection how far it got before the `connect_timeout` record.
@Suite(.timeLimit(.minutes(1))) struct WebSocketClientAttemptTimingsTests {
    static let steps = AttemptTimings(
        resolve: .init(start: 0, duration: 4),
        tcp: [.init(address: "192.0.2.2:443", start: 4, duration: 30, outcome: .connected)],
        tls: .init(start: 34, duration: 60), tlsHandshake: .resumed, upgrade: .init(start: 94, duration: 20))

    @Test func theGreetingIsTimedOnTheClientsClockAfterTheTransportsSteps() async throws {
        let clock = ManualClock()
        let transport = InMemoryTransport()
        var configuration = WebSocketConfiguration(
            url: URL(string: "wss://example.test/feed")!, pathMonitoring: .none, transport: transport)
        configuration.greeting = { [.text("hello")] }
        let client = try WebSocketClient(configuration: configuration, clock: clock, randomSeed: 1)
        let recorder = EventRecorder(client.events)
        await client.start()
        let connection = try #require(await transport.nextConnection())
        connection.holdSends()
        connection.setAttemptTimings(Self.steps)
        connection.emit(.opened(subprotocol: nil))
        #expect(await connection.nextCommand() == .send(.text("hello")))  // held: not handed over yet
        clock.advance(by: .milliseconds(40))
        connection.releaseHeldSends()
        let opened = try #require(await recorder.record(.opened))
        var expected = Self.steps
        expected.greeting = .init(start: 114, duration: 40)
        #expect(opened.timings == expected)
        connection.emit(.ended(.receiveFailed))  // the in-memory connection ends only when told
        _ = await recorder.record(.closed)
        #expect(recorder.records.filter { $0.timings != nil }.map(\.kind) == [.opened])  // not the loss after it
        await client.stop()
    }

    @Test func atTheConnectDeadlineTheClientAsksHowFarTheAttemptGot() async throws {
        let clock = ManualClock()
        let transport = InMemoryTransport()
        var configuration = WebSocketConfiguration(
            url: URL(string: "ws://example.test/feed")!, connectTimeout: .seconds(2), pathMonitoring: .none,
            transport: transport)
        configuration.backoff = BackoffPolicy(base: .seconds(60), jitterPercent: 0)
        let client = try WebSocketClient(configuration: configuration, clock: clock, randomSeed: 1)
        let recorder = EventRecorder(client.events)
        await client.start()
        let connection = try #require(await transport.nextConnection())
        let stalled = AttemptTimings(
            resolve: .init(start: 0, duration: 3),
            tcp: [.init(address: "192.0.2.9:80", start: 3, duration: 1_997, outcome: .unfinished)])
        connection.setAttemptTimings(stalled)
        clock.advance(by: .seconds(2))
        let closed = try #require(await recorder.record(.closed))
        #expect(closed.reason == .connectTimeout && closed.timings == stalled)
        connection.emit(.ended(.closedLocally))  // the end of the close the client ordered
        await client.stop()
    }
}
