#if os(Linux)
import Foundation
import Testing
import TetherCore
import TetherPOSIX
import TetherTestServer
@testable import Tether
import TetherTesting

/// The client on `ContinuousClock`, whose wake-ups come from the shared event loop's timers, against the real
/// test server: pings go out after the interval, pongs keep it open, a missing pong closes at the deadline,
/// and `stop()` leaves no timer behind.
@Suite struct WebSocketClientMonotonicClockTests {
    func makeClient(
        _ server: TestServer, timeout: Duration
    ) throws -> (WebSocketClient, EventRecorder) {
        let configuration = WebSocketClient.Configuration(
            url: URL(string: server.url(path: "/heartbeat"))!,
            heartbeatInterval: .milliseconds(30),
            heartbeatTimeout: timeout,
            backoff: BackoffPolicy(base: .seconds(10), factor: 2, cap: .seconds(10), jitterPercent: 0)
        )
        let client = try WebSocketClient(configuration: configuration)
        return (client, EventRecorder(client.events))
    }

    @Test func pongsKeepTheConnectionOpenAndStopLeavesNoTimer() async throws {
        let server = try TestServer(scenario: .normal)
        let (client, probe) = try self.makeClient(server, timeout: .seconds(2))
        await client.start()
        #expect(await probe.state(.open) != nil)

        let first = await probe.record(.pong)
        let second = await probe.record(.pong)
        #expect(first?.generation == 1 && second?.generation == 1)
        let gap = try #require(second).time - (try #require(first).time)
        #expect(gap >= 30)  // the next ping waits one interval after the pong
        #expect(await client.state.phase == .open)
        #expect(await client.resources.timers == 1)

        await client.stop()
        let resources = await client.resources
        #expect(resources.timers == 0 && resources.connections == 0 && resources.readers == 0)
        let pings = try #require(server.connection(1)).pingsReceived.count
        #expect(pings >= 2)
        await server.stop()
    }

    @Test func missingPongClosesOnceAtTheDeadline() async throws {
        let server = try TestServer(scenario: .noPong)
        let (client, probe) = try self.makeClient(server, timeout: .milliseconds(80))
        await client.start()
        #expect(await probe.state(.open) != nil)

        let ping = try #require(await probe.record(.ping))
        let closed = try #require(await probe.record(.closed))
        #expect(closed.reason == .pongTimeout)
        #expect(closed.generation == ping.generation)
        #expect(closed.time - ping.time >= 80)  // never before the deadline
        #expect(await probe.state(.waiting) != nil)
        #expect(probe.records.filter { $0.kind == .closed }.count == 1)

        await client.stop()
        #expect(await client.resources.timers == 0)
        await server.stop()
    }

    @Test func aConsumerPreferringTheEventExecutorGetsEveryEchoInOrderOnTheLoop() async throws {
        let loop = try EventLoop(name: "test-consumer")
        defer { loop.shutdown() }
        let server = try TestServer(scenario: .echo)
        var configuration = WebSocketClient.Configuration(
            url: URL(string: server.url(path: "/echo"))!, transport: SocketTransport(loop: loop)
        )
        configuration.eventLoop = loop
        let client = try WebSocketClient(configuration: configuration)
        #expect(client.eventExecutor as? LoopTaskExecutor === loop.taskExecutor)
        let count = 200
        let consumer = Task(executorPreference: client.eventExecutor) { () async -> ([String], Bool) in
            var echoed: [String] = []
            var alwaysOnLoop = true
            for await event in client.events {
                alwaysOnLoop = alwaysOnLoop && loop.inEventLoop
                switch event {
                case .stateChanged(let state, _) where state.phase == .open:
                    for index in 0..<count {
                        try? await client.send(text: "echo \(index)")
                    }
                case .message(.text(let text), _):
                    echoed.append(text)
                    if echoed.count == count { return (echoed, alwaysOnLoop) }
                default:
                    continue
                }
            }
            return (echoed, alwaysOnLoop)
        }
        await client.start()
        let (echoed, alwaysOnLoop) = await withDeadline(.seconds(20)) { await consumer.value } ?? ([], false)
        #expect(echoed == (0..<count).map { "echo \($0)" })
        #expect(alwaysOnLoop, "the consumer ran on the loop's thread")
        await client.stop()
        await server.stop()
    }

    /// A socket transport on another loop than the client's reaches the client through its event stream and a
    /// reader task (the client's own loop gets direct calls): the same events, in the same order.
    @Test func aSocketTransportOnAnotherLoopDeliversThroughItsStream() async throws {
        let transportLoop = try EventLoop(name: "test-other-loop")
        defer { transportLoop.shutdown() }
        let server = try TestServer(scenario: .echo)
        let configuration = WebSocketClient.Configuration(
            url: URL(string: server.url(path: "/echo"))!,
            heartbeatInterval: .milliseconds(30),
            transport: SocketTransport(loop: transportLoop)
        )
        let client = try WebSocketClient(configuration: configuration)
        let probe = EventRecorder(client.events)
        await client.start()
        #expect(await probe.state(.open) != nil)
        #expect(await client.resources.readers == 1)
        for index in 0..<50 {
            try await client.send(text: "echo \(index)")
        }
        var echoed: [String] = []
        let isMessage: @Sendable (WebSocketEvent) -> Bool = { if case .message = $0 { true } else { false } }
        while echoed.count < 50, let event = await probe.next(where: isMessage) {
            if case .message(.text(let text), _) = event { echoed.append(text) }
        }
        #expect(echoed == (0..<50).map { "echo \($0)" })
        #expect(await probe.record(.pong) != nil)
        await client.stop()
        let resources = await client.resources
        #expect(resources.connections == 0 && resources.readers == 0 && resources.timers == 0)
        await server.stop()
    }
}
#endif
