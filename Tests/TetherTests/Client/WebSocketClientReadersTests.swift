import Foundation
import Testing
import TetherCore
@testable import Tether
import TetherTesting

/// Readers of `events` that come and go, as an app's do: a SwiftUI `.task` cancelled with its view and started again
/// by the next one, two views reading at once. Driven by an in-memory transport and a manual clock.
@Suite struct WebSocketClientReadersTests {
    let clock = ManualClock()
    let transport = InMemoryTransport()

    func makeClient(inbound: Watermarks = .standard) throws -> WebSocketClient {
        var configuration = WebSocketClient.Configuration(
            url: URL(string: "ws://example.test/feed")!, heartbeatInterval: .seconds(60), pathMonitoring: .none,
            transport: self.transport)
        configuration.inboundWatermarks = inbound
        return try WebSocketClient(configuration: configuration, clock: self.clock, randomSeed: 1)
    }

    /// A reader in a task of its own, as a view's `.task` is: it reads until its sequence ends, announcing when it
    /// saw the session open and each text it read; the texts come back from the task.
    func startReader(_ client: WebSocketClient) -> (task: Task<[String], Never>, seen: AsyncStream<String>) {
        let (seen, sink) = AsyncStream.makeStream(of: String.self)
        let task = Task {
            var texts: [String] = []
            for await event in client.events {
                switch event {
                case .stateChanged(let state, _) where state.phase == .open: sink.yield("open")
                case .message(.text(let text), _):
                    texts.append(text)
                    sink.yield(text)
                default: break
                }
            }
            return texts
        }
        return (task, seen)
    }

    /// Waits until the reader announced `text`.
    func reader(_ seen: AsyncStream<String>, saw text: String) async {
        _ = await withDeadline { await seen.first { $0 == text } }
    }

    /// Reads `events` from a new iterator until `count` texts came (or the sequence ended); nil after the guard.
    func readTexts(_ client: WebSocketClient, count: Int) async -> [String]? {
        await withDeadline {
            var texts: [String] = []
            for await event in client.events {
                guard case .message(.text(let text), _) = event else { continue }
                texts.append(text)
                if texts.count == count { break }
            }
            return texts
        }
    }

    func openConnection(_ client: WebSocketClient) async throws -> InMemoryConnection {
        await client.start()
        let connection = try #require(await self.transport.nextConnection())
        connection.emit(.opened(subprotocol: nil))
        return connection
    }

    func stop(_ client: WebSocketClient, _ connection: InMemoryConnection) async {
        async let stopped: Void = client.stop()
        _ = await connection.nextCommand { $0 == .close(code: 1000, reason: "user_stopped") }
        connection.emit(.ended(.closedLocally))
        await stopped
    }

    @Test func aCancelledReaderDetachesAndTheNextReaderGoesOnFromThere() async throws {
        let client = try self.makeClient()
        let first = self.startReader(client)
        let connection = try await self.openConnection(client)
        await self.reader(first.seen, saw: "open")
        first.task.cancel()  // the view went away
        #expect(await first.task.value == [])  // its loop ended
        for index in 1...5 { connection.emit(.message(.text("\(index)"))) }
        // The next view's task: everything received since, in order.
        #expect(await self.readTexts(client, count: 5) == ["1", "2", "3", "4", "5"])
        connection.emit(.message(.text("6")))
        #expect(await self.readTexts(client, count: 1) == ["6"])
        await self.stop(client, connection)
    }

    /// Two readers at once: the newest takes over, the older one's sequence ends (nil), and nothing is lost between
    /// them. A SwiftUI view replaced by another can start the new `.task` before the old one is cancelled.
    @Test func aSecondReaderTakesOverAndTheFirstSeesTheEnd() async throws {
        let client = try self.makeClient()
        let first = self.startReader(client)
        let connection = try await self.openConnection(client)
        await self.reader(first.seen, saw: "open")
        connection.emit(.message(.text("to the first")))
        await self.reader(first.seen, saw: "to the first")
        // The second starts while the first waits for more: the first's loop ends with what it read.
        let second = Task { await self.readTexts(client, count: 1) }
        #expect(await abandoning { await first.task.value } == ["to the first"])
        connection.emit(.message(.text("to the second")))
        #expect(await second.value == ["to the second"])
        first.task.cancel()  // the old view's task is cancelled late: it changes nothing for the next reader
        connection.emit(.message(.text("later")))
        #expect(await self.readTexts(client, count: 1) == ["later"])
        await self.stop(client, connection)
    }

    /// While no reader is attached, events wait as they do before the first reader: above the inbound high watermark
    /// the client stops reading its transport, and the next reader gets every message, in order.
    @Test func withTheReaderGoneEventsWaitWithinTheWatermarksForTheNextOne() async throws {
        let inbound = Watermarks(high: 8_192, low: 2_048)
        let client = try self.makeClient(inbound: inbound)
        let first = self.startReader(client)
        let connection = try await self.openConnection(client)
        await self.reader(first.seen, saw: "open")
        first.task.cancel()
        _ = await first.task.value
        let payload = String(repeating: "x", count: 1_000)
        for index in 0..<20 { connection.emit(.message(.text("\(index) \(payload)"))) }
        let held: Void? = await abandoning { await client.waitUntilReadingHeld() }
        #expect(held != nil, "the client kept reading with nobody to read its events")
        let texts = await self.readTexts(client, count: 20) ?? []
        #expect(texts.map { String($0.prefix { $0 != " " }) } == (0..<20).map { "\($0)" })
        await self.stop(client, connection)
    }
}

extension InMemoryConnection {
    /// The next command that matches, passing over the others (pings, sends); nil after the guard.
    func nextCommand(where matches: @escaping @Sendable (Command) -> Bool) async -> Command? {
        while let command = await self.nextCommand() {
            if matches(command) { return command }
        }
        return nil
    }
}
