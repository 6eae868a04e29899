#if os(Linux)
import Foundation
import Testing
import TetherCore
import TetherTestServer
@testable import Tether
import TetherTesting

/// Issue 16's session promises over real sockets: nothing received is dropped, the hint never blocks a user's
/// attempt, queued sends survive reconnects after the greeting, and a bounded retry ends visibly.
extension AcceptanceTests {
    @Test func keepAndProbeInTheBackgroundDeliversEverythingTheServerSends() async throws {
        let count = 20
        try await withHarness(
            configure: { url in
                var configuration = AcceptanceHarness.configuration(url: url, timeout: 1000)
                configuration.lifecycle = .keepAndProbe
                return configuration
            },
            scenario: .send(count: count, size: 8, everyMilliseconds: 60)
        ) { harness in
            await harness.client.start()
            // On the client's own loop, not the pool that other suites keep busy: the background starts as soon as
            // the first message is in, while 19 more are still coming (one every 60 ms: over a second, so that a
            // loaded machine still enters the background before the last one).
            let first = await withTaskExecutorPreference(AcceptanceHarness.loop.taskExecutor) {
                let first = await harness.probe.message()
                await harness.client.enterBackground()
                return first
            }
            _ = try #require(first)
            #expect(await harness.client.state.phase == .suspended)
            let done = try #require(await harness.probe.wait { $0.messages.count >= count })
            // In order, every one, the later ones read while the session was suspended.
            let indices = done.messages.map { message -> Int? in
                guard case .text(let text) = message else { return nil }
                return Int(text.prefix { $0.isNumber })
            }
            #expect(indices == (0..<count).map { $0 })
            let background = try #require(done.events.firstIndex {
                if case .record(let record) = $0 { return record.kind == .background }
                return false
            })
            let afterBackground = done.events[background...].count {
                if case .message = $0 { return true }
                return false
            }
            #expect(afterBackground >= 1, "no message arrived in the background")
            #expect(await harness.client.state.phase == .suspended)
            #expect(await harness.client.staleEvents == 0)
            #expect(harness.records(.stale).isEmpty)
        }
    }

    @Test func theSessionOwnsTheConnectDeadlineAndTheTransportOnlyABackstop() async throws {
        try await withHarness(
            configure: { url in
                var configuration = AcceptanceHarness.configuration(url: url)
                configuration.connectTimeout = .milliseconds(150)
                #expect(configuration.transportRequest.connectTimeout == .milliseconds(1_300))
                return configuration
            },
            scenario: .silentHandshake
        ) { harness in
            await harness.client.start()
            let connecting = try #require(await harness.probe.record(.connecting))
            let closed = try #require(await harness.probe.record(.closed))
            // The machine's close (code 1001 from its own `.closeTransport`), at its deadline, not the transport's.
            #expect(closed.reason == .connectTimeout && closed.code == 1001 && closed.generation == 1)
            let late = closed.time - connecting.time - 150
            #expect(late >= 0 && late < 1_000, "closed \(late) ms after the deadline")
            try await harness.server.waitForEnd(ofConnection: 1)
        }
    }

    @Test func reconnectNowReachesTheServerWhileThePathMonitorSaysUnavailable() async throws {
        let offline = PathSnapshot(status: .unsatisfied, isExpensive: false, isConstrained: false, interfaces: [])
        try await withHarness(
            configure: { url in
                var configuration = AcceptanceHarness.configuration(url: url, timeout: 1000)
                configuration.pathMonitoring = .custom { ScriptedPathMonitor(current: offline) }
                return configuration
            },
            scenario: { context in
                context.index == 1 ? .close(afterMilliseconds: 50, code: 1011) : .normal
            }
        ) { harness in
            await harness.client.start()  // a user's start goes out too
            _ = try #require(await harness.probe.record(.path) { $0.path == .unavailable })
            let offline = try #require(await harness.probe.state(.offline))
            // 0 unless the close outran the monitor's first report (then counted while the path was unknown).
            #expect(offline.attempts <= 1)
            #expect(harness.server.acceptedConnectionCount == 1)

            await harness.client.reconnectNow()
            let opened = try #require(await harness.probe.record(.opened) { $0.generation == 2 })
            #expect(opened.from == .connecting)
            try await harness.server.waitForConnection(2) { $0.request != nil }
            let state = await harness.client.state
            #expect(state.phase == .open && state.path == .unavailable && state.attempts == offline.attempts)
            #expect(state.connectivity == .online)
            #expect(harness.records(.reconnectRequested).map(\.from) == [.offline])
        }
    }

    @Test func queuedSendsCrossAServerRestartInOrderAfterTheGreeting() async throws {
        let first = try TestServer(scenario: Scenario.normal.recordingPayloads())
        let port = first.port
        var configuration = AcceptanceHarness.configuration(
            url: first.url(path: "/chat"), timeout: 1000,
            backoff: BackoffPolicy(base: .milliseconds(20), factor: 2, cap: .milliseconds(100), jitterPercent: 0))
        configuration.greeting = { [.text("auth"), .text("subscribe")] }
        let client = try WebSocketClient(configuration: configuration, randomSeed: 1)
        let probe = EventRecorder(client.events)
        var second: TestServer?
        do {
            await client.start()
            _ = try #require(await probe.record(.opened))
            try await first.waitForConnection(1) { $0.messageCount >= 2 }  // the greeting, read by the server
            await first.stop()  // the server goes away: the client retries, refused, with backoff
            _ = try #require(await probe.record(.closed))
            #expect(await client.state.phase != .open)
            for index in 0..<5 {
                try await client.send(.text("q\(index)"), policy: .queued(expiresAfter: nil))
            }
            try await client.send(.text("stale"), policy: .queued(expiresAfter: .milliseconds(1)))
            second = try TestServer(configuration: .init(port: port), scenario: Scenario.normal.recordingPayloads())
            let restarted = try #require(second)
            try await restarted.waitForConnection(1) { $0.messageCount >= 7 }
            let payloads = (restarted.connection(1)?.messages.elements ?? []).map {
                String(decoding: $0.payload ?? [], as: UTF8.self)
            }
            #expect(payloads == ["auth", "subscribe", "q0", "q1", "q2", "q3", "q4"])
            let dropped = probe.events.compactMap { event -> String? in
                guard case .outboxDropped(.text(let text), .expired) = event else { return nil }
                return text
            }
            #expect(dropped == ["stale"])
            // The greeting went out on the first connection too, before the session was reported open.
            let greeted = (first.connection(1)?.messages.elements ?? []).map {
                String(decoding: $0.payload ?? [], as: UTF8.self)
            }
            #expect(greeted == ["auth", "subscribe"])
        } catch {
            await client.stop()
            await second?.stop()
            throw error
        }
        await client.stop()
        await second?.stop()
    }

    @Test func aBoundedRetryGivesUpVisiblyAfterNAttempts() async throws {
        try await withHarness(
            configure: { url in
                var configuration = AcceptanceHarness.configuration(
                    url: url,
                    backoff: BackoffPolicy(
                        base: .milliseconds(20), factorPercent: 150, cap: .milliseconds(100), jitterPercent: 0))
                configuration.retryPolicy = RetryPolicy(maximumAttempts: 3)
                return configuration
            },
            scenario: .reject(status: 500)
        ) { harness in
            await harness.client.start()
            let failed = try #require(await harness.probe.state(.failed))
            #expect(failed.failure == .handshakeRejected(status: 500) && failed.attempts == 3)
            #expect(failed.connectivity == .serverUnreachable(.serverError(status: 500)))
            let gaveUp = try #require(harness.records(.gaveUp).first)
            #expect(gaveUp.attempt == 3 && gaveUp.generation == 3)
            #expect(harness.records(.retryScheduled).map(\.delay) == [20, 30])
            #expect(harness.server.acceptedConnectionCount == 3)
        }
    }
}
#endif
