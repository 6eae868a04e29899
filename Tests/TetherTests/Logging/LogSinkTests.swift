import Dispatch
import Foundation
import Synchronization
import Testing
@testable import Tether
import TetherCore
import TetherTesting

/// `WebSocketConfiguration.logSink` from a user's side: the records reach it in order as log entries (level,
/// message, metadata) above its minimum level, off the client; a sink that falls behind holds nothing up and loses
/// the oldest records, counted; no secret of the configuration reaches it; a client dropped without `stop()` lets its
/// sink go once what was queued is written.
@Suite(.timeLimit(.minutes(1))) struct LogSinkTests {
    /// What a sink was given, in order, and a way to wait for it.
    final class Collected: Sendable {
        private let state = Mutex<[LogEntry]>([])
        private let (stream, sink) = AsyncStream.makeStream(of: Int.self)

        func append(_ entry: LogEntry) {
            let count = self.state.withLock { entries in
                entries.append(entry)
                return entries.count
            }
            self.sink.yield(count)
        }

        var entries: [LogEntry] { self.state.withLock { $0 } }
        var messages: [String] { self.entries.map(\.message) }

        /// Waits until an entry satisfies `condition` (checked on every entry written). False after 10 s.
        func wait(for condition: @escaping @Sendable (LogEntry) -> Bool) async -> Bool {
            let stream = self.stream
            let entries = self.entries
            if entries.contains(where: condition) { return true }
            return await withDeadline {
                for await _ in stream where self.entries.contains(where: condition) { return true }
                return false
            } ?? false
        }
    }

    func client(
        _ sink: LogSink, url: String = "wss://example.test/feed", transport: InMemoryTransport,
        configure: (inout WebSocketConfiguration) -> Void = { _ in }
    ) throws -> (WebSocketClient, EventRecorder) {
        var configuration = WebSocketConfiguration(
            url: URL(string: url)!, heartbeatInterval: .milliseconds(100), pathMonitoring: .none, transport: transport)
        configuration.logSink = sink
        configure(&configuration)
        let client = try WebSocketClient(configuration: configuration, clock: ManualClock(), randomSeed: 1)
        return (client, EventRecorder(client.events))
    }

    @Test func entriesComeInOrderWithTheirLevelAndMetadataAndNothingBelowTheMinimum() async throws {
        let collected = Collected()
        let transport = InMemoryTransport()
        let sink = LogSink(minimumLevel: .info, write: collected.append)
        let (client, recorder) = try self.client(sink, transport: transport)
        await client.start()
        let connection = try #require(await transport.nextConnection())
        connection.emit(.redirected(status: 302, to: URL(string: "wss://b.example/next?token=t")!))
        connection.emit(.opened(subprotocol: nil))
        #expect(await recorder.state(.open) != nil)
        connection.emit(.message(.text("not an entry: trace")))  // below the minimum (and not recorded by default)
        connection.emit(.ended(.peerClosed(code: 1001)))
        #expect(await collected.wait { $0.message == "retry_scheduled" })
        #expect(collected.messages == ["connecting", "redirected", "opened", "closed", "retry_scheduled"])
        #expect(collected.entries.map(\.level) == [.info, .info, .notice, .warning, .info])
        let redirected = collected.entries[1]
        #expect(redirected.metadata.map(\.key) == ["t", "gen", "from", "to", "status", "location"])
        #expect(redirected.metadataText
            == "t=0 gen=1 from=connecting to=connecting status=302 location=wss://b.example/next")
        #expect(redirected.record?.kind == .redirected)
        #expect(collected.entries[3].metadataText.hasSuffix("reason=peer_closed code=1001"))
        await client.stop()
    }

    /// The sink's first `write` blocks: the client goes on (every message is delivered to `events` meanwhile), the
    /// queue keeps the newest `capacity` records, and once the sink is free it is told how many it lost.
    @Test func aSinkThatFallsBehindHoldsNothingUpAndIsToldWhatItLost() async throws {
        let collected = Collected()
        let firstWrite = DispatchSemaphore(value: 0)
        let (blocked, blockedSink) = AsyncStream.makeStream(of: Void.self)
        let calls = Atomic<Int>(0)
        let sink = LogSink(minimumLevel: .trace, capacity: 4) { entry in
            if calls.add(1, ordering: .relaxed).newValue == 1 {
                blockedSink.yield()
                firstWrite.wait()  // a logger stuck on its output
            }
            collected.append(entry)
        }
        let transport = InMemoryTransport()
        let (client, recorder) = try self.client(sink, transport: transport) { $0.recordsMessages = true }
        await client.start()
        var blockedWrites = blocked.makeAsyncIterator()
        _ = await blockedWrites.next()  // the `connecting` record is being written, and stays so
        let connection = try #require(await transport.nextConnection())
        connection.emit(.opened(subprotocol: nil))
        for index in 0..<50 {
            connection.emit(.message(.text("\(index)")))
        }
        let delivered = await recorder.wait { snapshot in
            snapshot.events.filter { if case .message = $0 { true } else { false } }.count == 50
        }
        #expect(delivered != nil)  // all of them, with the sink stuck
        connection.emit(.ended(.receiveFailed))
        await client.stop()  // returns with the sink still stuck: it waits for no logger
        let stopped = await recorder.wait { $0.records.contains { $0.kind == .stopped } }
        let recordCount = stopped?.records.count ?? -1
        firstWrite.signal()
        #expect(await collected.wait { $0.record?.kind == .stopped })  // the last record
        let written = collected.entries.filter { $0.record != nil }
        let dropped = collected.entries.compactMap { entry -> Int? in
            guard entry.message == "records_dropped", case .number(let count) = entry.metadata[0].value else {
                return nil
            }
            return count
        }
        #expect(written.count <= 1 + 4)  // the stuck one, and at most `capacity` waiting
        #expect(dropped.reduce(0, +) >= recordCount - 5)
        #expect(written.count + dropped.reduce(0, +) == recordCount)  // every record written or counted
        #expect(written.map(\.record!.time) == written.map(\.record!.time).sorted())
        #expect(collected.entries.first { $0.record == nil }?.level == .warning)
    }

    @Test func noSecretOfTheConfigurationReachesTheSink() async throws {
        let collected = Collected()
        let transport = InMemoryTransport()
        let (client, recorder) = try self.client(
            LogSink(minimumLevel: .trace, write: collected.append),
            url: "wss://alice:s3cret@example.test/feed?token=s3cret", transport: transport
        ) { configuration in
            configuration.headers = [(name: "Authorization", value: "Bearer s3cret")]
            let credentials = HTTPProxy.Credentials(user: "alice", password: "s3cret")
            configuration.proxy = .http(HTTPProxy(host: "proxy.test", credentials: credentials))
            configuration.recordsMessages = true
        }
        await client.start()
        let connection = try #require(await transport.nextConnection())
        connection.emit(.redirected(status: 302, to: URL(string: "wss://bob:s3cret@b.example/free?key=s3cret#s3cret")!))
        connection.emit(.ended(.handshakeRejected(status: 401, retryAfter: nil)))
        #expect(await recorder.state(.failed) != nil)
        #expect(await collected.wait { $0.message == "closed" })
        let text = collected.entries.map { "\($0.message) \($0.metadataText) \(String(describing: $0.record))" }
        #expect(!text.isEmpty)
        #expect(text.allSatisfy { !$0.contains("s3cret") && !$0.contains("alice") && !$0.contains("bob") })
        #expect(collected.entries.last?.level == .error)  // the session failed
        await client.stop()
    }

    @Test func aClientDroppedWithoutStopLetsItsSinkGoOnceWhatWasQueuedIsWritten() async throws {
        let collected = Collected()
        let (released, releasedSink) = AsyncStream.makeStream(of: Void.self)
        final class Witness: Sendable {
            let gone: AsyncStream<Void>.Continuation
            init(_ gone: AsyncStream<Void>.Continuation) { self.gone = gone }
            deinit { self.gone.yield() }
        }
        let transport = InMemoryTransport()
        do {
            let witness = Witness(releasedSink)
            let sink = LogSink { entry in
                _ = witness
                collected.append(entry)
            }
            let (client, _) = try self.client(sink, transport: transport)
            await client.start()
            #expect(await collected.wait { $0.message == "connecting" })
        }
        let gone = await withDeadline { () -> Bool? in
            for await _ in released { return true }
            return false
        }
        #expect(gone == true)  // the writer ended and let the sink (and what it holds) go
        #expect(collected.messages == ["connecting"])
    }

    /// One sink for several clients started from several tasks at once: each client's task calls it, so the closure
    /// must be safe from several threads (as `Collected` is); every client's records arrive.
    @Test func oneSinkServesSeveralClientsStartedAtOnce() async throws {
        let collected = Collected()
        let sink = LogSink(minimumLevel: .info, write: collected.append)
        let transports = (0..<5).map { _ in InMemoryTransport() }
        let clients = try transports.map { try self.client(sink, transport: $0).0 }
        await withTaskGroup(of: Void.self) { group in
            for client in clients {
                group.addTask { await client.start() }
            }
        }
        #expect(await collected.wait { _ in collected.messages.filter { $0 == "connecting" }.count == 5 })
        for transport in transports {
            await transport.nextConnection()?.emit(.ended(.connectFailed(.refused)))  // in-memory: ends when told
        }
        #expect(await collected.wait { _ in collected.messages.filter { $0 == "retry_scheduled" }.count == 5 })
        await withTaskGroup(of: Void.self) { group in
            for client in clients {
                group.addTask { await client.stop() }
            }
        }
    }

    @Test func aCapacityUnderOneIsRefused() {
        var configuration = WebSocketConfiguration(
            url: URL(string: "ws://example.test/")!, transport: InMemoryTransport())
        configuration.logSink = LogSink(capacity: 0) { _ in }
        #expect(throws: WebSocketConfigurationError(
            property: "logSink.capacity", requirement: "at least 1 record", value: "0")) {
            try configuration.validate()
        }
        configuration.logSink = nil
        configuration.maximumRedirects = -1
        #expect(throws: WebSocketConfigurationError(
            property: "maximumRedirects", requirement: "at least 0 (0 follows none)", value: "-1")) {
            try configuration.validate()
        }
    }
}
