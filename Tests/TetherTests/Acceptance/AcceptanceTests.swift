#if os(Linux)
import Foundation
import Testing
import TetherCore
import TetherTestServer
@testable import Tether
import TetherTesting
import TetherTestSupport

/// The seed's four outcomes and more, each over real loopback sockets: the real client and transport against
/// the controllable test server, asserted on the client's event records and the server's recording.
/// Serialized: the suite measures real time, so its tests do not compete with each other for the two cores.
@Suite(.serialized) struct AcceptanceTests {
    // MARK: Heartbeat outcomes

    @Test func normalPongKeepsTheConnectionOpenAndRecordsRoundTrips() async throws {
        try await withHarness(
            configure: { AcceptanceHarness.configuration(url: $0, timeout: 1000) },
            scenario: .normal
        ) { harness in
            await harness.client.start()
            for _ in 0..<3 {
                #expect(await harness.probe.record(.pong) != nil)
            }
            let pongs = harness.records(.pong)
            #expect(pongs.count >= 3)
            #expect(pongs.allSatisfy { $0.generation == 1 && ($0.rtt ?? -1) >= 0 })
            #expect(harness.records(.closed).isEmpty)
            let state = await harness.client.state
            #expect(state.phase == .open && state.generation == 1 && state.lastRTT != nil)
            #expect((harness.server.connection(1)?.pingsReceived.count ?? 0) >= 3)
        }
    }

    @Test func pongDelayedInsideTheTimeoutKeepsTheConnectionOpen() async throws {
        try await withHarness(
            configure: { AcceptanceHarness.configuration(url: $0, timeout: 1000) },
            scenario: .pongDelay(milliseconds: 40)
        ) { harness in
            await harness.client.start()
            for _ in 0..<3 {
                let pong = try #require(await harness.probe.record(.pong))
                #expect((pong.rtt ?? 0) >= 40)
            }
            #expect(harness.records(.closed).isEmpty)
            #expect(await harness.client.state.generation == 1)
        }
    }

    @Test func pongDelayedPastTheTimeoutClosesOnceAtTheDeadlineThenReconnectsAfterBackoff() async throws {
        try await withHarness(scenario: { context in
            context.index == 1 ? .pongDelay(milliseconds: 1000) : .normal
        }) { harness in
            await harness.client.start()
            let ping = try #require(await harness.probe.record(.ping))
            let closed = try #require(await harness.probe.record(.closed))
            #expect(closed.reason == .pongTimeout)
            #expect(closed.code == 1001)
            #expect(closed.generation == 1)
            // interval + timeout after the open = timeout after the ping, within scheduler tolerance.
            let late = closed.time - (ping.time + 200)
            #expect(late >= 0 && late <= TestTime.scaled(milliseconds: 100), "closed \(late) ms after the deadline")
            let retry = try #require(await harness.probe.record(.retryScheduled))
            let delay = try #require(retry.delay)
            #expect(delay >= 40 && delay <= 60)
            let reopened = try #require(await harness.probe.record(.opened) { $0.generation == 2 })
            #expect(reopened.time - closed.time >= delay)
            #expect(harness.records(.closed).filter { $0.generation == 1 }.count == 1)
            let first = try await harness.server.waitForEnd(ofConnection: 1)
            #expect(first.closeReceived?.code == 1001)
        }
    }

    // MARK: Server closes

    @Test(arguments: [UInt16(1000), 1001, 1011, 4000])
    func serverCloseIsReportedWithItsCodeAndRetried(code: UInt16) async throws {
        try await withHarness(scenario: { context in
            context.index == 1 ? .close(afterMilliseconds: 20, code: code, reason: "bye") : .normal
        }) { harness in
            await harness.client.start()
            let closed = try #require(await harness.probe.record(.closed))
            #expect(closed.reason == .peerClosed(code: code))
            #expect(closed.code == Int(code))
            #expect(await harness.probe.record(.retryScheduled) != nil)
            #expect(await harness.probe.record(.opened) { $0.generation == 2 } != nil)
            #expect(harness.records(.closed).filter { $0.generation == 1 }.count == 1)
        }
    }

    @Test(arguments: [UInt16(1008), 1003])
    func serverCloseForPolicyOrUnsupportedDataStopsWithAVisibleFailure(code: UInt16) async throws {
        try await withHarness(scenario: .close(afterMilliseconds: 20, code: code)) { harness in
            await harness.client.start()
            let failed = try #require(await harness.probe.state(.failed))
            #expect(failed.failure == .peerClosed(code: code))
            #expect(await harness.client.resources.timers == 0)
            #expect(harness.records(.retryScheduled).isEmpty)
        }
    }

    @Test func serverAskingToComeBackLaterGetsTheLongerDelay() async throws {
        try await withHarness(scenario: { context in
            context.index == 1 ? .close(afterMilliseconds: 20, code: 1013) : .normal
        }) { harness in
            await harness.client.start()
            let retry = try #require(await harness.probe.record(.retryScheduled))
            #expect((retry.delay ?? 0) >= 300)
            #expect(await harness.probe.record(.opened) { $0.generation == 2 } != nil)
        }
    }

    // MARK: Connection failures

    @Test func refusedConnectionsBackOffWithGrowingDelays() async throws {
        let reserved = try ReservedPort()
        let configuration = AcceptanceHarness.configuration(url: "ws://127.0.0.1:\(reserved.port)/feed")
        let client = try WebSocketClient(configuration: configuration, randomSeed: 3)
        let probe = EventRecorder(client.events)
        await client.start()
        var delays: [Int] = []
        for attempt in 1...3 {
            let closed = try #require(await probe.record(.closed))
            let tried = [ConnectAttempt(address: "127.0.0.1:\(reserved.port)", failure: .refused)]
            #expect(closed.reason == .connectFailed(.refused, tried: tried))
            let retry = try #require(await probe.record(.retryScheduled))
            #expect(retry.attempt == attempt)
            delays.append(try #require(retry.delay))
        }
        await client.stop()
        // 40 ms × 2ⁿ plus up to 50 % jitter: every delay is above the previous one.
        #expect(delays[0] >= 40 && delays[0] <= 60)
        #expect(delays[1] >= 80 && delays[1] <= 120)
        #expect(delays[2] >= 160 && delays[2] <= 240)
        let resources = await client.resources
        #expect(resources.connections + resources.readers + resources.timers == 0)
    }

    @Test func serviceUnavailableWithRetryAfterIsHonoured() async throws {
        try await withHarness(scenario: { context in
            context.index == 1 ? .reject(status: 503, retryAfterSeconds: 1) : .normal
        }) { harness in
            await harness.client.start()
            let closed = try #require(await harness.probe.record(.closed))
            #expect(closed.reason == .handshakeRejected(status: 503))
            #expect(closed.code == 503)
            let retry = try #require(await harness.probe.record(.retryScheduled))
            #expect(retry.delay == 1000)
        }
    }

    @Test func aTenDigitRetryAfterIsCutToTheConfiguredMaximumAndTheClientComesBack() async throws {
        try await withHarness(
            configure: { url in
                var configuration = AcceptanceHarness.configuration(url: url)
                configuration.maximumRetryAfter = .milliseconds(600)
                return configuration
            },
            scenario: { context in
                // 317 years: once ignored for its ten digits, now taken and capped.
                context.index == 1 ? .reject(status: 503, retryAfterSeconds: 9_999_999_999) : .normal
            }
        ) { harness in
            await harness.client.start()
            let retry = try #require(await harness.probe.record(.retryScheduled))
            #expect(retry.delay == 600)
            let opened = try #require(await harness.probe.record(.opened))
            #expect(opened.generation == 2)
            #expect(opened.time - retry.time >= 600)
        }
    }

    @Test func theLargestRetryAfterWaitsTheDefaultFiveMinutesNotForever() async throws {
        // `Retry-After: 9223372036854775807` seconds on the wire.
        try await withHarness(scenario: .reject(status: 429, retryAfterSeconds: .max)) { harness in
            await harness.client.start()
            let retry = try #require(await harness.probe.record(.retryScheduled))
            #expect(retry.delay == 300_000)
            let state = await harness.client.state
            #expect(state.phase == .waiting)
            #expect(harness.server.connections.count == 1)
        }
    }

    @Test func unauthorizedHandshakeStopsWithAVisibleErrorAndNeverReportsOpen() async throws {
        try await withHarness(scenario: .reject(status: 401)) { harness in
            await harness.client.start()
            let failed = try #require(await harness.probe.state(.failed))
            #expect(failed.failure == .handshakeRejected(status: 401))
            #expect(harness.records(.opened).isEmpty)
            #expect(harness.records(.retryScheduled).isEmpty)
            #expect(harness.server.connections.count == 1)
        }
    }

    // MARK: Receive loop

    @Test func receiveLoopDeliversTenThousandMessagesInOrderWhilePingsFlow() async throws {
        let count = 10_000
        // The client's own heartbeat is not under test here (the server's pings are): its pong deadline is
        // generous, so that 10,000 messages queued ahead of a pong in a debug build cannot turn into a timeout.
        try await withHarness(
            // A record per message too, counted below.
            configure: {
                AcceptanceHarness.configuration(url: $0, interval: 200, timeout: 10_000, recordsMessages: true)
            },
            scenario: .send(count: count, size: 24).pinging(everyMilliseconds: 5)
        ) { harness in
            await harness.client.start()
            for index in 0..<count {
                let event = await harness.probe.next { if case .message = $0 { true } else { false } }
                guard case .message(.text(let text), _)? = event else {
                    Issue.record("message \(index) missing")
                    return
                }
                let number = text.prefix { $0 != "." }
                guard number == "\(index)" else {
                    let log = harness.probe.records.filter { $0.kind != .message }.map(\.logLine)
                    Issue.record("message \(index) arrived as \(number)\n\(log.joined(separator: "\n"))")
                    return
                }
            }
            // The record of the last message follows its event.
            #expect(await harness.probe.record(.message) != nil)
            let record = try await harness.server.waitForConnection(1) { $0.pongsReceived.count >= 1 }
            #expect(record.sentMessageCount == count)
            #expect(harness.records(.message).count == count)
            #expect(await harness.client.state.phase == .open)
        }
    }

    // MARK: Generations

    @Test func lateCallbacksOfAnOldConnectionChangeNothingOnTheNewOne() async throws {
        let late = LateCallbackTransport(wrapping: SocketTransport(loop: AcceptanceHarness.loop))
        try await withHarness(
            configure: { AcceptanceHarness.configuration(url: $0, transport: late) },
            scenario: { context in context.index == 1 ? .noPong : .normal }
        ) { harness in
            await harness.client.start()
            #expect(await harness.probe.record(.closed)?.reason == .pongTimeout)
            #expect(await harness.probe.state(.open).map(\.generation) == 2)
            let staleBefore = await harness.client.staleEvents

            // Generation 1's queued callbacks now arrive, after generation 2 opened.
            late.inject(.opened(subprotocol: nil), into: 0)
            late.inject(.pong(id: 1), into: 0)
            late.inject(.message(.text("stale")), into: 0)
            late.inject(.ended(.peerClosed(code: 1011)), into: 0)
            // A fresh pong on generation 2 proves the new session kept going after them.
            let pong = try #require(await harness.probe.record(.pong) { $0.generation == 2 })
            #expect(pong.generation == 2)

            let state = await harness.client.state
            #expect(state.phase == .open && state.generation == 2)
            #expect(await harness.client.staleEvents >= staleBefore + 3)
            #expect(harness.records(.closed).count == 1)
            #expect(harness.server.connection(2)?.closeReceived == nil)
            #expect(!harness.probe.events.contains { if case .message = $0 { true } else { false } })
            late.release()
        }
    }

    // MARK: Privacy

    @Test func tokensInTheQueryAndSecretsInBodiesAppearInNoRecordOrDescription() async throws {
        try await withHarness(
            path: "/feed?token=QUERY-SECRET-7",
            // The message's own record must not leak the body either.
            configure: { AcceptanceHarness.configuration(url: $0, recordsMessages: true) },
            scenario: .echo
        ) { harness in
            let serverLines = harness.server.events()
            await harness.client.start()
            _ = await harness.probe.state(.open)
            try await harness.client.send(text: "body-secret-42")
            _ = await harness.probe.next { if case .message = $0 { true } else { false } }
            await harness.client.stop()
            await harness.server.stop()
            var lines = harness.probe.events.map(\.description)
            lines += harness.probe.records.map(\.logLine)
            for await event in serverLines {
                lines.append(event.description)
            }
            let text = lines.joined(separator: "\n")
            #expect(text.contains("event=message"))
            #expect(!text.contains("QUERY-SECRET"))
            #expect(!text.contains("body-secret"))
        }
    }

    // MARK: Stop

    @Test func stopWhileConnectingLeavesNothingBehind() async throws {
        try await withHarness(scenario: .silentHandshake) { harness in
            await harness.client.start()
            try await harness.server.waitForConnection(1) { $0.request != nil }
            await harness.client.stop()
            #expect(await harness.leftovers == 0)
            #expect(await harness.client.state.phase == .stopped)
            try await harness.server.waitForEnd(ofConnection: 1)
        }
    }

    @Test func stopWhileWaitingForBackoffLeavesNothingBehind() async throws {
        try await withHarness(scenario: .reject(status: 500)) { harness in
            await harness.client.start()
            _ = await harness.probe.state(.waiting)
            await harness.client.stop()
            #expect(await harness.leftovers == 0)
            #expect(harness.server.connections.count == 1)
        }
    }

    @Test func stopWhileOpenClosesWith1000AndLeavesNothingBehind() async throws {
        try await withHarness(scenario: .normal) { harness in
            await harness.client.start()
            _ = await harness.probe.state(.open)
            await harness.client.stop()
            #expect(await harness.leftovers == 0)
            let record = try await harness.server.waitForEnd(ofConnection: 1)
            #expect(record.closeReceived?.code == 1000)
            #expect(record.end?.reason == .closeHandshakeCompleted(initiatedByServer: false))
        }
    }

    @Test func sendWhileClosedThrowsAndNothingIsDropped() async throws {
        try await withHarness(scenario: .echo) { harness in
            await #expect(throws: WebSocketSendError.notOpen) { try await harness.client.send(text: "early") }
            await harness.client.start()
            _ = await harness.probe.state(.open)
            try await harness.client.send(text: "hello")
            let echoed = await harness.probe.next { if case .message = $0 { true } else { false } }
            guard case .message(.text("hello"), _)? = echoed else {
                Issue.record("expected the echo, got \(String(describing: echoed))")
                return
            }
            await harness.client.stop()
            await #expect(throws: WebSocketSendError.notOpen) { try await harness.client.send(text: "late") }
        }
    }
}
#endif
