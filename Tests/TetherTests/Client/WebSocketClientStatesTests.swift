import Foundation
import Observation
import Testing
import TetherCore
@testable import Tether
import TetherTesting

/// The client's state observed from many places at once: `states` for any number of observers, the `@Observable`
/// object for SwiftUI, and the times in a state an app can show.
@Suite struct WebSocketClientStatesTests {
    let clock = ManualClock()
    let transport = InMemoryTransport()

    /// A client on the test's manual clock, or on `clock`; a 4 s backoff without jitter.
    func makeClient(clock: (some Clock<Duration>)? = ManualClock?.none) throws -> WebSocketClient {
        let configuration = WebSocketClient.Configuration(
            url: URL(string: "ws://example.test/feed")!, heartbeatInterval: .seconds(60),
            backoff: BackoffPolicy(base: .seconds(4), jitterPercent: 0), pathMonitoring: .none,
            transport: self.transport)
        guard let clock else { return try WebSocketClient(configuration: configuration, clock: self.clock) }
        return try WebSocketClient(configuration: configuration, clock: clock)
    }

    /// Follows `states` in a task until `phase`; the phases seen come back from the task.
    func observe(_ client: WebSocketClient, until phase: SessionPhase) -> Task<[SessionPhase], Never> {
        Task {
            var phases: [SessionPhase] = []
            for await state in client.states {
                phases.append(state.phase)
                if state.phase == phase { break }
            }
            return phases
        }
    }

    @Test func everyObserverStartsWithTheCurrentStateAndEndsOnTheLatest() async throws {
        let client = try self.makeClient()
        let observers = (0..<5).map { _ in self.observe(client, until: .open) }
        await client.start()
        let connection = try #require(await self.transport.nextConnection())
        connection.emit(.opened(subprotocol: nil))
        for observer in observers {
            let phases = await abandoning { await observer.value } ?? []
            // Each started with the state current when it looked (stopped or connecting) and ended on open; one
            // that looked late skipped what came in between.
            #expect(phases.first == .stopped || phases.first == .connecting || phases == [.open], "\(phases)")
            #expect(phases.last == .open)
        }
        // A late observer starts with the current state at once.
        var late = client.states.makeAsyncIterator()
        #expect(await late.next()?.phase == .open)
        #expect(client.stateBroadcast.observerCount == 1)  // the five left with their loops
    }

    /// The state of `events` and of `states` is the same value: what `.stateChanged` carried last is `state`.
    @Test func theStateOfEventsStatesAndTheActorAgree() async throws {
        let client = try self.makeClient()
        let probe = EventRecorder(client.events)
        _ = try await self.transport.open(client, probe)
        let changed = try #require(probe.events.lazy.compactMap { event -> ConnectionState? in
            if case .stateChanged(let state, _) = event { state } else { nil }
        }.last)
        #expect(changed.phase == .open)
        var states = client.states.makeAsyncIterator()
        #expect(await states.next() == changed)
        #expect(await client.state == changed)
    }

    /// "Retrying in 4 s": the retry time as an instant of the continuous clock and as the time left, with no need to
    /// know when the client was made. With a manual clock the instant is the manual milliseconds counted from the
    /// continuous clock's reading at the client's creation.
    @Test func aWaitingStateGivesTheRetryAsAnInstantAndTheTimeLeft() async throws {
        let before = ContinuousClock.now
        let client = try self.makeClient()
        let after = ContinuousClock.now
        let probe = EventRecorder(client.events)
        await client.start()
        self.clock.advance(toMilliseconds: 1_000)
        let connection = try #require(await self.transport.nextConnection())
        connection.emit(.ended(.connectFailed(.refused)))
        let waiting = try #require(await probe.state(.waiting))
        #expect(waiting.retryAt == 5_000)  // 1 s plus the 4 s backoff, on the client's clock
        let instant = try #require(waiting.retryInstant)
        #expect(instant >= before.advanced(by: .seconds(5)) && instant <= after.advanced(by: .seconds(5)))
        #expect(waiting.timeUntilRetry(now: instant.advanced(by: .seconds(-4))) == .seconds(4))
        #expect(waiting.timeUntilRetry(now: instant.advanced(by: .seconds(1))) == .zero)
        #expect(await client.state == waiting)  // the same instant however often it is read
        self.clock.advance(toMilliseconds: 5_000)
        #expect(await probe.state(.connecting)?.retryInstant == nil)
        #expect(await client.state.timeUntilRetry() == nil)
    }

    /// On the continuous clock (the default) the instant is the real one: the time left counts down from the delay.
    @Test func onTheContinuousClockTheTimeLeftIsAtMostTheDelay() async throws {
        let client = try self.makeClient(clock: ContinuousClock())
        let probe = EventRecorder(client.events)
        await client.start()
        let connection = try #require(await self.transport.nextConnection())
        let failed = ContinuousClock.now
        connection.emit(.ended(.connectFailed(.refused)))
        let waiting = try #require(await probe.state(.waiting))
        let left = try #require(waiting.timeUntilRetry())
        #expect(left <= .seconds(4))  // (zero only if this test was held up for the whole backoff)
        let retry = try #require(waiting.retryInstant)
        #expect(failed.duration(to: retry) >= .milliseconds(3_999))  // the machine counts whole milliseconds
        await client.stop()
    }

    @MainActor
    @Test func theObservableStateFollowsTheClientOnTheMainActor() async throws {
        let client = try self.makeClient()
        let observed = ObservableConnectionState(client)
        let another = ObservableConnectionState(client)
        #expect(observed.state.phase == .stopped)  // the current state at once
        await client.start()
        let connection = try #require(await self.transport.nextConnection())
        connection.emit(.opened(subprotocol: nil))
        #expect(await Self.phase(of: observed, becomes: .open))
        #expect(await Self.phase(of: another, becomes: .open))
        #expect(observed.state == (await client.state))
        async let stopped: Void = client.stop()
        _ = await connection.nextCommand()
        connection.emit(.ended(.closedLocally))
        await stopped
        #expect(await Self.phase(of: observed, becomes: .stopped))
    }

    /// Waits, on Observation's own signal, until `observed` shows `phase`; false after the guard.
    @MainActor
    static func phase(of observed: ObservableConnectionState, becomes phase: SessionPhase) async -> Bool {
        while true {
            let (changed, sink) = AsyncStream.makeStream(of: Void.self)
            // Registered before the check, on the main actor: a change after the check is seen.
            withObservationTracking { _ = observed.state } onChange: { sink.yield() }
            if observed.state.phase == phase { return true }
            let seen: Void? = await withDeadline { await changed.first { _ in true } }
            guard seen != nil else { return false }
        }
    }
}
