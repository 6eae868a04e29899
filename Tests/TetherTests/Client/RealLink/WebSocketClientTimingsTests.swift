#if os(Linux)
import Foundation
import Glibc
import Testing
import TetherCore
import TetherPOSIX
import TetherTestServer
import TetherTestSupport
@testable import Tether
import TetherTesting

/// The timings of each attempt as an app reads them on its records (`LogRecord.timings`), against real sockets: the
/// open with every step and the greeting, a refused attempt and one stalled against a blackhole with the steps they
/// reached, many clients at once each with their own, and a stop midway that leaves nothing to the next attempt.
@Suite(.timeLimit(.minutes(1))) struct WebSocketClientTimingsTests {
    func configuration(_ url: String, connectTimeout: Duration = .seconds(10)) -> WebSocketConfiguration {
        var configuration = WebSocketConfiguration(
            url: URL(string: url)!, heartbeatTimeout: .seconds(5), connectTimeout: connectTimeout,
            pathMonitoring: .none)
        configuration.backoff = BackoffPolicy(base: .seconds(10), jitterPercent: 0)  // one attempt per test
        return configuration
    }

    @Test func theOpenedRecordTimesEveryStepInOrderWithTheGreetingLast() async throws {
        let server = try TestServer(scenario: .echo)
        var configuration = self.configuration(server.url(path: "/greeted"))
        configuration.greeting = { [.text("hello")] }
        let client = try WebSocketClient(configuration: configuration)
        let recorder = EventRecorder(client.events)
        await client.start()
        let opened = try #require(await recorder.record(.opened))
        let timings = try #require(opened.timings, "\(opened.logLine)")
        let steps = SocketTransportTimingsTests.steps(timings) + [timings.greeting].compactMap { $0 }
        #expect(steps.count == 4, "\(timings)")  // resolve, one connect, the upgrade, the greeting
        #expect(zip(steps, steps.dropFirst()).allSatisfy { $0.end <= $1.start }, "\(timings)")
        #expect(timings.greeting?.finished == true && timings.tcp.map(\.outcome) == [.connected])
        #expect(opened.logLine.contains(" greeting_ms=") && opened.logLine.contains(" tcp=127.0.0.1:"))
        #expect(LogEntry(opened).metadata.contains { $0.key == "upgrade_ms" })
        await client.stop()
        #expect(recorder.records.filter { $0.timings != nil }.map(\.kind) == [.opened])
        await server.stop()
    }

    @Test func aRefusedAttemptsCloseRecordHasTheStepsItReached() async throws {
        let reserved = try ReservedPort()
        let client = try WebSocketClient(configuration: self.configuration("ws://127.0.0.1:\(reserved.port)/"))
        let recorder = EventRecorder(client.events)
        await client.start()
        let closed = try #require(await recorder.record(.closed))
        let timings = try #require(closed.timings)
        #expect(timings.resolve?.finished == true && timings.upgrade == nil)
        #expect(timings.tcp.map(\.address) == ["127.0.0.1:\(reserved.port)"])
        #expect(timings.tcp.map(\.outcome) == [.failed(.refused)])
        await client.stop()
    }

    @Test func aConnectTimeoutAgainstABlackholeHasTheConnectThatNeverEnded() async throws {
        let (listener, port) = try BlockingLoopbackListener.open()
        defer { close(listener) }
        let fillers = try (0..<2).map { _ in try SocketTransportTimingsTests.connectBlocking(port: port) }
        defer { fillers.forEach { close($0) } }
        let client = try WebSocketClient(
            configuration: self.configuration("ws://127.0.0.1:\(port)/", connectTimeout: .milliseconds(300)))
        let recorder = EventRecorder(client.events)
        await client.start()
        let closed = try #require(await recorder.record(.closed))
        // The client's deadline or the transport's, whichever came first: the same attempt, timed as far as it got.
        #expect(closed.reason == .connectTimeout || closed.reason == .connectFailed(.timedOut), "\(closed.logLine)")
        let timings = try #require(closed.timings, "\(closed.logLine)")
        let connect = try #require(timings.tcp.first)
        #expect(timings.tcp.count == 1 && connect.outcome != .connected && timings.upgrade == nil, "\(timings)")
        #expect(connect.start + connect.duration >= 250, "\(timings)")
        await client.stop()
    }

    struct Timed: Sendable {
        var index: Int
        var timings: AttemptTimings?
    }

    @Test func clientsConnectingAtOnceEachGetTheirOwnTimings() async throws {
        let servers = try (0..<6).map { _ in try TestServer(scenario: .normal) }
        let timings = try await withThrowingTaskGroup(of: Timed.self) { group in
            for (index, server) in servers.enumerated() {
                let configuration = self.configuration(server.url(path: "/\(index)"))
                group.addTask {
                    let client = try WebSocketClient(configuration: configuration)
                    let recorder = EventRecorder(client.events)
                    await client.start()
                    let opened = await recorder.record(.opened)
                    await client.stop()
                    return Timed(index: index, timings: opened?.timings)
                }
            }
            var byIndex: [Int: AttemptTimings] = [:]
            for try await timed in group { byIndex[timed.index] = timed.timings }
            return byIndex
        }
        for (index, server) in servers.enumerated() {
            let port = try #require(URL(string: server.url())?.port)
            let own = try #require(timings[index], "client \(index) has no timings")
            #expect(own.tcp.map(\.address) == ["127.0.0.1:\(port)"], "client \(index): \(own)")
            #expect(own.upgrade?.finished == true)
            await server.stop()
        }
    }

    @Test func aStopMidwayLeavesNothingForTheNextAttemptsRecords() async throws {
        // The first connection's handshake is never answered; the second opens.
        let server = try TestServer { context in context.index == 1 ? .silentHandshake : .normal }
        let client = try WebSocketClient(configuration: self.configuration(server.url()))
        let recorder = EventRecorder(client.events)
        await client.start()
        try await server.waitForConnection(1) { $0.request != nil }
        await client.stop()  // while the upgrade waits: a stop is no failure, its record has no timings
        await client.start()
        let opened = try #require(await recorder.record(.opened))
        let timings = try #require(opened.timings)
        #expect(opened.generation == 2 && timings.upgrade?.finished == true, "\(timings)")
        #expect(recorder.records.filter { $0.timings != nil }.map(\.kind) == [.opened])
        await client.stop()
        await server.stop()
    }
}
#endif
