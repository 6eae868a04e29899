import Foundation
import Testing
import TetherCore
@testable import Tether
import TetherTesting

/// The client in the background and back, under both lifecycle policies, on a manual clock.
@Suite struct WebSocketClientLifecycleTests {
    let clock = ManualClock()
    let transport = InMemoryTransport(holdsCloseFrames: true)

    func makeClient(lifecycle: LifecyclePolicy) throws -> (WebSocketClient, EventRecorder) {
        let configuration = WebSocketClient.Configuration(
            url: URL(string: "ws://example.test/feed")!,
            heartbeatInterval: .milliseconds(1000),
            heartbeatTimeout: .milliseconds(500),
            probeTimeout: .milliseconds(200),
            lifecycle: lifecycle,
            closeTimeout: .milliseconds(2000),
            transport: self.transport
        )
        let client = try WebSocketClient(configuration: configuration, clock: self.clock, randomSeed: 11)
        return (client, EventRecorder(client.events))
    }


    // MARK: - keepAndProbe

    @Test func keepAndProbePausesTheHeartbeatAndAnAnsweredProbeKeepsTheSameGeneration() async throws {
        let (client, probe) = try self.makeClient(lifecycle: .keepAndProbe)
        let connection = try await self.transport.open(client, probe)
        await client.enterBackground()
        #expect(await probe.state(.suspended)?.generation == 1)
        self.clock.advance(toMilliseconds: 60_000)  // timers are not guaranteed in the background: none runs
        #expect(connection.log.isEmpty)
        #expect(await client.resources.timers == 0)

        await client.enterForeground()
        #expect(await probe.state(.open)?.generation == 1)
        guard case .ping(let id)? = await connection.nextCommand() else {
            Issue.record("expected a probe on foreground")
            return
        }
        self.clock.advance(toMilliseconds: 60_150)
        connection.emit(.pong(id: id))
        #expect(await probe.record(.pong)?.rtt == 150)
        self.clock.advance(toMilliseconds: 60_200)  // past the probe deadline: nothing happens
        let state = await client.state
        #expect(state.phase == .open && state.generation == 1)
        #expect(self.transport.all.count == 1)
        #expect(!connection.log.contains { if case .close = $0 { true } else { false } })
        // The heartbeat resumes from the pong: next ping one interval later.
        self.clock.advance(toMilliseconds: 61_150)
        guard case .ping? = await connection.nextCommand() else {
            Issue.record("expected the heartbeat to resume")
            return
        }
    }

    @Test func keepAndProbeWithoutAPongClosesWithProbeTimeoutThenOpensANewGenerationAtOnce() async throws {
        let (client, probe) = try self.makeClient(lifecycle: .keepAndProbe)
        let first = try await self.transport.open(client, probe)
        await client.enterBackground()
        #expect(await probe.state(.suspended) != nil)
        self.clock.advance(toMilliseconds: 5_000)
        await client.enterForeground()
        guard case .ping? = await first.nextCommand() else {
            Issue.record("expected a probe on foreground")
            return
        }
        self.clock.advance(toMilliseconds: 5_199)
        self.clock.advance(toMilliseconds: 5_200)  // probe deadline: 5_000 + 200
        #expect(await first.nextCommand() == .close(code: 1001, reason: "probe_timeout"))
        let closed = await probe.record(.closed)
        #expect(closed?.reason == .probeTimeout && closed?.time == 5_200 && closed?.generation == 1)
        let second = try #require(await self.transport.nextConnection())
        #expect(self.clock.now.offset == .milliseconds(5_200))  // at once: no backoff
        second.emit(.opened(subprotocol: nil))
        let reopened = await probe.state(.open)
        #expect(reopened?.generation == 2 && reopened?.attempts == 0)
        // The first connection's late pong changes nothing.
        first.emit(.pong(id: 1))
        first.emit(.ended(.closedLocally))
        #expect(await client.state.generation == 2)
    }

    // MARK: - closeInBackground

    @Test func closeInBackgroundReturnsOnlyOnceTheCloseFrameWasSent() async throws {
        let (client, probe) = try self.makeClient(lifecycle: .closeInBackground)
        let connection = try await self.transport.open(client, probe)
        let returned = Task { await client.enterBackground() }
        #expect(await connection.nextCommand() == .close(code: 1001, reason: "entered_background"))
        #expect(await probe.state(.suspended) != nil)
        // The clock stays before the bound, so only the flush can let `enterBackground` return.
        connection.flushClose()
        await returned.value
        #expect(!connection.hasCloseSentWaiter)
    }

    @Test func closeInBackgroundGivesUpWaitingForTheCloseFrameAfterTheCloseTimeout() async throws {
        let (client, probe) = try self.makeClient(lifecycle: .closeInBackground)
        let connection = try await self.transport.open(client, probe)
        self.clock.advance(toMilliseconds: 100)
        let returned = Task { await client.enterBackground() }
        #expect(await connection.nextCommand() == .close(code: 1001, reason: "entered_background"))
        self.clock.advance(toMilliseconds: 2_100)  // 100 + closeTimeout; the frame is still held
        await returned.value
        #expect(connection.hasCloseSentWaiter)  // the transport never reported; the client stopped waiting
        connection.flushClose()
    }

    @Test func foregroundAfterCloseInBackgroundOpensANewGenerationOrWaitsOfflineWithoutAPath() async throws {
        let (client, probe) = try self.makeClient(lifecycle: .closeInBackground)
        let first = try await self.transport.open(client, probe)
        let background = Task { await client.enterBackground() }
        #expect(await first.nextCommand() == .close(code: 1001, reason: "entered_background"))
        first.flushClose()
        await background.value
        first.emit(.ended(.closedLocally))  // stale: generation 1 was closed by the client

        await client.updatePath(.unavailable)
        await client.enterForeground()
        #expect(await probe.state(.offline) != nil)
        #expect(self.transport.all.count == 1)
        await client.updatePath(.available)
        let second = try #require(await self.transport.nextConnection())
        second.emit(.opened(subprotocol: nil))
        let reopened = await probe.state(.open)
        #expect(reopened?.generation == 2 && reopened?.attempts == 0)
    }

    @Test func backgroundWhileConnectingAbandonsTheAttemptUnderBothPolicies() async throws {
        for policy in [LifecyclePolicy.closeInBackground, .keepAndProbe] {
            let transport = InMemoryTransport()
            var configuration = WebSocketClient.Configuration(
                url: URL(string: "ws://example.test/feed")!, lifecycle: policy, transport: transport
            )
            configuration.closeTimeout = .milliseconds(100)
            let client = try WebSocketClient(configuration: configuration, clock: self.clock, randomSeed: 3)
            await client.start()
            let attempt = try #require(await transport.nextConnection())
            await client.enterBackground()
            #expect(await attempt.nextCommand() == .close(code: 1001, reason: "entered_background"))
            #expect(await client.state.phase == .suspended)
        }
    }
}
