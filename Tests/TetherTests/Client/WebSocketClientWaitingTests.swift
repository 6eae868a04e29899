import Foundation
import Testing
import TetherCore
@testable import Tether
import TetherTesting

/// `waitUntilOpen(timeout:)`: the README's `start()`, then `send`, made to work as written; every way the wait ends,
/// from several tasks at once.
@Suite struct WebSocketClientWaitingTests {
    let clock = ManualClock()
    let transport = InMemoryTransport()

    /// A client on the test's manual clock, or on `clock`.
    func makeClient(
        clock: (some Clock<Duration>)? = ManualClock?.none, greeting: Bool = false
    ) throws -> WebSocketClient {
        var configuration = WebSocketClient.Configuration(
            url: URL(string: "ws://example.test/feed")!, heartbeatInterval: .seconds(60), pathMonitoring: .none,
            transport: self.transport)
        if greeting { configuration.greeting = { [.text("auth")] } }
        guard let clock else { return try WebSocketClient(configuration: configuration, clock: self.clock) }
        return try WebSocketClient(configuration: configuration, clock: clock)
    }

    /// `waitUntilOpen` in a task of its own; how it ended comes back from the task.
    func waiter(
        _ client: WebSocketClient, timeout: Duration? = nil
    ) -> Task<Result<Void, WebSocketOpenError>, Never> {
        Task {
            do throws(WebSocketOpenError) {
                try await client.waitUntilOpen(timeout: timeout)
                return .success(())
            } catch {
                return .failure(error)
            }
        }
    }

    func outcome(_ waiter: Task<Result<Void, WebSocketOpenError>, Never>) async -> WebSocketOpenError?? {
        guard let result = await abandoning({ await waiter.value }) else { return .some(nil) }  // hung: neither
        switch result {
        case .success: return nil
        case .failure(let error): return .some(error)
        }
    }

    /// The README's order, with a greeting: `send` right after the wait finds the session open, after the greeting.
    @Test func startThenWaitThenSendWorksAsWritten() async throws {
        let client = try self.makeClient(greeting: true)
        let network = Task {
            let connection = try #require(await self.transport.nextConnection())
            connection.emit(.opened(subprotocol: nil))
            return connection
        }
        await client.start()
        try await client.waitUntilOpen(timeout: .seconds(10))
        try await client.send(text: "hello")
        let connection = try await network.value
        #expect(connection.log == [.send(.text("auth")), .send(.text("hello"))])
        try await client.waitUntilOpen()  // open: at once
    }

    @Test func manyTasksWaitAtOnceAndAllReturnWhenItOpens() async throws {
        let client = try self.makeClient()
        let probe = EventRecorder(client.events)
        await client.start()
        let waiters = (0..<20).map { _ in self.waiter(client, timeout: .seconds(3_600)) }
        let connection = try #require(await self.transport.nextConnection())
        connection.emit(.ended(.connectFailed(.refused)))  // a failure in between: still waiting (backoff)
        let retry = try #require(await probe.state(.waiting)?.retryAt)
        self.clock.advance(toMilliseconds: retry)
        let second = try #require(await self.transport.nextConnection())
        second.emit(.opened(subprotocol: nil))
        for waiter in waiters {
            #expect(await self.outcome(waiter) == nil)
        }
    }

    @Test func aClientThatIsNotStartedIsStoppedAtOnce() async throws {
        let client = try self.makeClient()
        await #expect(throws: WebSocketOpenError.stopped) { try await client.waitUntilOpen(timeout: .seconds(1)) }
    }

    @Test func stopWhileWaitingEndsEveryWaiterWithStopped() async throws {
        let client = try self.makeClient()
        await client.start()
        let connection = try #require(await self.transport.nextConnection())
        let waiters = (0..<5).map { _ in self.waiter(client) }
        async let stopped: Void = client.stop()
        _ = await connection.nextCommand()
        connection.emit(.ended(.closedLocally))
        await stopped
        for waiter in waiters {
            #expect(await self.outcome(waiter) == .some(.stopped))
        }
    }

    @Test func aFailureThatIsNotRetriedEndsTheWaitWithItsReason() async throws {
        let client = try self.makeClient()
        let probe = EventRecorder(client.events)
        await client.start()
        let waiter = self.waiter(client)
        let connection = try #require(await self.transport.nextConnection())
        connection.emit(.ended(.handshakeRejected(status: 401, retryAfter: nil)))
        let reason = try #require(await probe.state(.failed)?.failure)
        #expect(await self.outcome(waiter) == .some(.failed(reason)))
    }

    /// The deadline is on the client's clock: on the continuous clock here, with a connection that never opens.
    @Test func aSessionThatDoesNotOpenInTimeEndsTheWaitWithTimedOutAndGoesOn() async throws {
        let client = try self.makeClient(clock: ContinuousClock())
        await client.start()
        let started = ContinuousClock.now
        await #expect(throws: WebSocketOpenError.timedOut) {
            try await client.waitUntilOpen(timeout: .milliseconds(50))
        }
        #expect(started.duration(to: .now) >= .milliseconds(50))
        #expect(await client.state.phase == .connecting)  // the client goes on
        let connection = try #require(await self.transport.nextConnection())
        connection.emit(.opened(subprotocol: nil))
        try await client.waitUntilOpen(timeout: .seconds(10))
        async let stopped: Void = client.stop()
        _ = await connection.nextCommand()
        connection.emit(.ended(.closedLocally))
        await stopped
    }

    /// Cancelling the waiting task ends the wait with `.cancelled` and changes nothing for the client or the others.
    @Test func cancellingAWaitingTaskEndsOnlyThatWait() async throws {
        let client = try self.makeClient()
        await client.start()
        let cancelled = self.waiter(client, timeout: .seconds(60))
        let other = self.waiter(client)
        cancelled.cancel()
        #expect(await self.outcome(cancelled) == .some(.cancelled))
        let connection = try #require(await self.transport.nextConnection())
        connection.emit(.opened(subprotocol: nil))
        #expect(await self.outcome(other) == nil)
        #expect(await client.state.phase == .open)
    }
}
