import Foundation
import Testing
import TetherCore
@testable import Tether
import TetherTesting

/// What URLSession's metrics (`URLSessionTaskTransactionMetrics`) become as `AttemptTimings`, on any platform: the
/// dates a real task reports, mapped to the steps of the socket transport's records.
@Suite struct URLSessionTransactionTimesTests {
    static let origin = Date(timeIntervalSinceReferenceDate: 800_000_000)

    static func at(_ milliseconds: Double) -> Date { Self.origin.addingTimeInterval(milliseconds / 1_000) }

    @Test func aFreshWSSConnectionMapsLookupConnectTLSAndTheUpgradeInOrder() throws {
        let times = URLSessionTransactionTimes(
            fetchStart: Self.origin, domainLookupStart: Self.at(1), domainLookupEnd: Self.at(9),
            connectStart: Self.at(10), secureConnectionStart: Self.at(30), secureConnectionEnd: Self.at(75),
            connectEnd: Self.at(75), requestStart: Self.at(76), responseStart: Self.at(120),
            remoteAddress: "2001:db8::2")
        let timings = try #require(times.timings(until: Self.at(500)))
        #expect(timings == AttemptTimings(
            resolve: .init(start: 1, duration: 8),
            tcp: [.init(address: "[2001:db8::2]", start: 10, duration: 20, outcome: .connected)],
            tls: .init(start: 30, duration: 45), upgrade: .init(start: 76, duration: 44)))
        #expect(timings.tlsHandshake == nil)  // URLSession does not say whether TLS resumed
        #expect(timings.tcp.first?.family == "ipv6")
    }

    @Test func aConnectThatTimedOutIsUnfinishedUpToTheCollectionAndLaterStepsAreAbsent() throws {
        let times = URLSessionTransactionTimes(
            fetchStart: Self.origin, domainLookupStart: Self.at(0), domainLookupEnd: Self.at(2),
            connectStart: Self.at(2), remoteAddress: "192.0.2.2")
        let timings = try #require(times.timings(until: Self.at(4_000)))
        #expect(timings.tcp == [.init(address: "192.0.2.2", start: 2, duration: 3_998, outcome: .unfinished)])
        #expect(timings.tls == nil && timings.upgrade == nil)
    }

    @Test func aReusedConnectionHasOnlyTheUpgradeAndNoDatesNoTimings() {
        let reused = URLSessionTransactionTimes(
            fetchStart: Self.origin, requestStart: Self.at(1), responseStart: Self.at(3))
        #expect(reused.timings(until: Self.at(10)) == AttemptTimings(upgrade: .init(start: 1, duration: 2)))
        #expect(URLSessionTransactionTimes().timings(until: Self.origin) == nil)
    }

    /// URLSession collects a task's metrics as it completes: a failed attempt's timings are the connection's by its
    /// end, and the client's record of the failure carries them.
    @Test func aTaskThatFailsHasItsMetricsAsTheConnectionsTimingsAndOnTheClientsRecord() async throws {
        let factory = ScriptedWebSocketTaskFactory()
        var configuration = WebSocketConfiguration(
            url: URL(string: "wss://example.test/feed")!, pathMonitoring: .none,
            transport: URLSessionTransport(factory: factory, clock: ManualClock()))
        configuration.backoff = BackoffPolicy(base: .seconds(60), jitterPercent: 0)
        let client = try WebSocketClient(configuration: configuration, clock: ManualClock(), randomSeed: 1)
        let recorder = EventRecorder(client.events)
        await client.start()
        _ = await recorder.record(.connecting)
        let task = try #require(factory.tasks.first)
        let times = URLSessionTransactionTimes(
            fetchStart: Self.origin, domainLookupStart: Self.at(0), domainLookupEnd: Self.at(5),
            connectStart: Self.at(5), remoteAddress: "192.0.2.2")
        task.collectMetrics(times, at: Self.at(300))
        task.complete(error: URLError(.cannotConnectToHost))
        let closed = try #require(await recorder.record(.closed))
        #expect(closed.timings == times.timings(until: Self.at(300)))
        #expect(closed.timings?.tcp.first?.outcome == .unfinished)
        await client.stop()
    }
}
