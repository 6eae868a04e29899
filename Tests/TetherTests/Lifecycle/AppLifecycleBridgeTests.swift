import Foundation
import Synchronization
import Testing
import TetherCore
@testable import Tether
import TetherTesting

/// The platform-free part of the UIKit lifecycle observer: ordering and the background task's span.
@MainActor
@Suite struct AppLifecycleBridgeTests {
    /// Records begin and end calls; `ended` announces each end.
    @MainActor
    final class FakeBackgroundTasks: BackgroundTaskProvider {
        var begun: [Int] = []
        var endedTokens: [Int] = []
        var expirations: [Int: @MainActor @Sendable () -> Void] = [:]
        let ended: AsyncStream<Int>
        private let endSink: AsyncStream<Int>.Continuation
        private var nextToken = 100

        init() {
            (self.ended, self.endSink) = AsyncStream.makeStream()
        }

        func beginBackgroundTask(named name: String, expiration: @escaping @MainActor @Sendable () -> Void) -> Int {
            self.nextToken += 1
            self.begun.append(self.nextToken)
            self.expirations[self.nextToken] = expiration
            return self.nextToken
        }

        func endBackgroundTask(_ token: Int) {
            self.endedTokens.append(token)
            self.endSink.yield(token)
        }

        func nextEnd() async -> Int? {
            let ended = self.ended
            return await withDeadline {
                var iterator = ended.makeAsyncIterator()
                return await iterator.next()
            }
        }
    }

    let clock = ManualClock()
    let transport = InMemoryTransport(holdsCloseFrames: true)

    func makeClient() throws -> (WebSocketClient, EventRecorder) {
        let configuration = WebSocketClient.Configuration(
            url: URL(string: "ws://example.test/feed")!, closeTimeout: .seconds(5), transport: self.transport
        )
        let client = try WebSocketClient(configuration: configuration, clock: self.clock, randomSeed: 5)
        return (client, EventRecorder(client.events))
    }


    @Test func backgroundTaskIsHeldUntilTheCloseFrameWasSent() async throws {
        let (client, probe) = try self.makeClient()
        let connection = try await self.transport.open(client, probe)
        let tasks = FakeBackgroundTasks()
        let bridge = AppLifecycleBridge(client: client, backgroundTasks: tasks)

        bridge.didEnterBackground()
        #expect(tasks.begun == [101])  // begun before the notification handler returned
        #expect(await connection.nextCommand() == .close(code: 1001, reason: "entered_background"))
        #expect(tasks.endedTokens.isEmpty)  // the frame is still held, and the clock is before the bound
        #expect(bridge.heldAssertions == 1)
        connection.flushClose()
        #expect(await tasks.nextEnd() == 101)
        #expect(bridge.heldAssertions == 0)
    }

    @Test func backgroundThenForegroundReachTheClientInOrder() async throws {
        let (client, probe) = try self.makeClient()
        let first = try await self.transport.open(client, probe)
        let tasks = FakeBackgroundTasks()
        let bridge = AppLifecycleBridge(client: client, backgroundTasks: tasks)

        bridge.didEnterBackground()
        bridge.willEnterForeground()  // before the client has even closed
        #expect(await first.nextCommand() == .close(code: 1001, reason: "entered_background"))
        first.flushClose()
        #expect(await tasks.nextEnd() == 101)
        let second = try #require(await self.transport.nextConnection())
        second.emit(.opened(subprotocol: nil))
        #expect(await probe.state(.open)?.generation == 2)
        #expect(tasks.endedTokens == [101])
    }

    @Test func expiredBackgroundTaskIsEndedOnceAndNotAgainWhenTheCloseCompletes() async throws {
        let (client, probe) = try self.makeClient()
        let connection = try await self.transport.open(client, probe)
        let tasks = FakeBackgroundTasks()
        let bridge = AppLifecycleBridge(client: client, backgroundTasks: tasks)

        bridge.didEnterBackground()
        #expect(await connection.nextCommand() == .close(code: 1001, reason: "entered_background"))
        tasks.expirations[101]?()
        #expect(tasks.endedTokens == [101])
        #expect(await tasks.nextEnd() == 101)
        connection.flushClose()
        // A foreground transition runs after the background one has finished: by then a second end would show.
        bridge.willEnterForeground()
        _ = try #require(await self.transport.nextConnection())
        #expect(tasks.endedTokens == [101])
    }
}
