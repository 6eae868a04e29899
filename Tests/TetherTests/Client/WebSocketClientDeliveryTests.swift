#if os(Linux)
import Foundation
import Synchronization
import Testing
import TetherCore
import TetherTestServer
@testable import Tether
import TetherTesting

/// Acknowledged sends and resumable feeds against a real peer: the test server speaking its delivery protocol
/// (`Scenario.DeliveryProtocol`), behind a `FaultProxy` that resets and cuts connections on the test's signal.
@Suite(.timeLimit(.minutes(2))) struct WebSocketClientDeliveryTests {
    struct Setup {
        let server: TestServer
        let proxy: FaultProxy
        let client: WebSocketClient
        let probe: EventRecorder

        /// `scenario` picks each connection's scenario from its index (from 1).
        init(
            streams: [String] = ["prices"], retained: Int = 1_000, recordsPayloads: Bool = false,
            acknowledgesFrom firstAcknowledging: Int = 1, splitting: Bool = false,
            configure: (inout WebSocketConfiguration) -> Void = { _ in }
        ) throws {
            self.server = try TestServer(scenario: { context in
                var scenario = Scenario.delivery(streams: streams, everyMilliseconds: 10, retained: retained)
                scenario.delivery?.acknowledges = context.index >= firstAcknowledging
                return recordsPayloads ? scenario.recordingPayloads() : scenario
            })
            self.proxy = try FaultProxy(upstreamPort: self.server.port, splitting: splitting)
            var configuration = WebSocketClient.Configuration(
                url: URL(string: "ws://127.0.0.1:\(self.proxy.port)/delivery")!,
                backoff: BackoffPolicy(
                    base: .milliseconds(20), factor: 2, cap: .milliseconds(200), jitterPercent: 0),
                pathMonitoring: .none)
            configuration.delivery.acknowledgements = TestServerDeliveryProtocol.acknowledgements()
            configuration.delivery.feeds = TestServerDeliveryProtocol.feeds(streams)
            configure(&configuration)
            self.client = try WebSocketClient(configuration: configuration, randomSeed: 39)
            self.probe = EventRecorder(self.client.events)
        }

        func stop() async {
            await self.client.stop()
            await self.proxy.stop()
            await self.server.stop()
        }

        /// Waits until the server's application took `count` sends.
        func waitUntilTaken(_ count: Int) async throws {
            let server = self.server
            try await server.waitUntil(timeout: .seconds(20)) { _ in server.deliveryRecord.takenCount >= count }
        }
    }

    /// The acknowledged sends reported so far, by id.
    static func acknowledged(_ events: [WebSocketEvent]) -> [String: Int] {
        var writes: [String: Int] = [:]
        for case .delivery(.acknowledged(let id, let count)) in events {
            writes[id, default: 0] += count  // a second report of one id would show as a sum
        }
        return writes
    }

    /// The feed numbers of `stream` delivered as `.message`, in order.
    static func feedNumbers(_ events: [WebSocketEvent], stream: String = "prices") -> [UInt64] {
        events.compactMap { event in
            guard case .message(let message, _) = event,
                  let position = TestServerDeliveryProtocol.feedPosition(in: message), position.stream == stream
            else {
                return nil
            }
            return position.sequence
        }
    }

    static func send(_ client: WebSocketClient, _ id: String) async throws {
        try await client.send(TestServerDeliveryProtocol.send(id: id, body: "body of \(id)"), id: id)
    }

    @Test func sendsTakenButNotAcknowledgedWhenTheConnectionIsResetAreWrittenAgainAndTakenOnce() async throws {
        // The first connection takes the sends but never acknowledges them; the next one acknowledges.
        let setup = try Setup(streams: ["prices"], acknowledgesFrom: 2)
        await setup.client.start()
        try await setup.client.waitUntilOpen(timeout: .seconds(10))
        let ids = (1...5).map { "m\($0)" }
        for id in ids {
            try await Self.send(setup.client, id)
        }
        try await setup.waitUntilTaken(5)
        #expect(await setup.client.deliveryCounts.acknowledged == 0)
        await setup.proxy.resetConnections()
        let snapshot = try #require(await setup.probe.wait(timeout: .seconds(20)) { snapshot in
            Self.acknowledged(snapshot.events).count == 5
        })
        let record = setup.server.deliveryRecord
        #expect(record.taken == ids && record.takenCount == 5)  // in order, each once
        #expect(record.repeats == 5)  // every one came again: the server dropped the repeats
        #expect(Self.acknowledged(snapshot.events) == Dictionary(uniqueKeysWithValues: ids.map { ($0, 2) }))
        // Written again instead of reported as unconfirmed.
        #expect(!snapshot.events.contains { if case .unconfirmed = $0 { true } else { false } })
        let counts = await setup.client.deliveryCounts
        #expect(counts.rewrites == 5 && counts.acknowledged == 5 && counts.notForApp == 5)
        #expect(await setup.client.queuedCount == 0)
        await setup.stop()
    }

    @Test func aFeedCutInTheMiddleOfAFrameResumesAfterTheLastNumberDeliveredWithoutLossOrRepeat() async throws {
        let setup = try Setup(recordsPayloads: true, splitting: true)
        await setup.client.start()
        let first = try #require(await setup.probe.wait(timeout: .seconds(20)) {
            Self.feedNumbers($0.events).count >= 20
        })
        await setup.proxy.cutConnections()
        let before = Self.feedNumbers(first.events).count
        let snapshot = try #require(await setup.probe.wait(timeout: .seconds(20)) { snapshot in
            snapshot.records.contains { $0.kind == .opened && $0.generation == 2 }
                && Self.feedNumbers(snapshot.events).count >= before + 40
        })
        let numbers = Self.feedNumbers(snapshot.events)
        #expect(zip(numbers, numbers.dropFirst()).allSatisfy { $1 == $0 + 1 }, "\(numbers)")
        #expect(!snapshot.events.contains { if case .delivery(.gap) = $0 { true } else { false } })
        // The second connection resumed after the last number the first one delivered.
        let onFirst = snapshot.events.compactMap { event -> UInt64? in
            guard case .message(let message, 1) = event else { return nil }
            return TestServerDeliveryProtocol.feedPosition(in: message)?.sequence
        }
        let lastOnFirst = try #require(onFirst.last)
        let resumed = try #require(setup.server.connection(2)?.messages.first?.payload)
        #expect(String(decoding: resumed, as: UTF8.self) == "subscribe prices \(lastOnFirst)")
        // The position is the last number delivered: the snapshot's last, or one the feed brought since.
        #expect(await setup.client.feedPositions["prices"].map { $0 >= numbers.last ?? .max } == true)
        await setup.stop()
    }

    @Test func aServerThatReplaysWhatWasDeliveredHasItsRepeatsDroppedAndCounted() async throws {
        // The app asks to resume five numbers before its position: the server replays them, the client drops them.
        let setup = try Setup { configuration in
            configuration.delivery.feeds?.resume = { positions in
                [.text("subscribe prices" + (positions["prices"].map { " \($0 >= 5 ? $0 - 5 : 0)" } ?? ""))]
            }
        }
        await setup.client.start()
        _ = await setup.probe.wait(timeout: .seconds(20)) { Self.feedNumbers($0.events).count >= 10 }
        await setup.proxy.resetConnections()
        let snapshot = try #require(await setup.probe.wait(timeout: .seconds(20)) { snapshot in
            snapshot.records.contains { $0.kind == .opened && $0.generation == 2 }
                && Self.feedNumbers(snapshot.events).count >= 30
        })
        let numbers = Self.feedNumbers(snapshot.events)
        #expect(zip(numbers, numbers.dropFirst()).allSatisfy { $1 == $0 + 1 }, "\(numbers)")
        #expect(await setup.client.deliveryCounts.duplicatesDropped == 5)
        await setup.stop()
    }

    @Test func theOverlapOfAMakeBeforeBreakHandoverDeliversEachNumberOnce() async throws {
        let wifi = PathSnapshot(status: .satisfied, interfaces: [.wifi], interfaceNames: ["wlan0"])
        let cellular = PathSnapshot(status: .satisfied, interfaces: [.cellular], interfaceNames: ["rmnet0"])
        let monitor = ScriptedPathMonitor(current: wifi)
        let setup = try Setup { configuration in
            configuration.pathMonitoring = .custom { monitor }
            configuration.interfaceSwitch = .makeBeforeBreak(drain: .milliseconds(300))
        }
        await setup.client.start()
        _ = await setup.probe.wait(timeout: .seconds(20)) { Self.feedNumbers($0.events).count >= 10 }
        monitor.deliver(cellular)
        let snapshot = try #require(await setup.probe.wait(timeout: .seconds(20)) { snapshot in
            snapshot.records.contains { $0.kind == .closed && $0.generation == 1 }
                && Self.feedNumbers(snapshot.events).count >= 60
        })
        let numbers = Self.feedNumbers(snapshot.events)
        #expect(zip(numbers, numbers.dropFirst()).allSatisfy { $1 == $0 + 1 }, "\(numbers)")
        let generations = Set(snapshot.events.compactMap { event -> Int? in
            guard case .message(_, let generation) = event else { return nil }
            return generation
        })
        #expect(generations == [1, 2])
        // Both connections carried the feed during the drain: what came twice was dropped.
        #expect(await setup.client.deliveryCounts.duplicatesDropped > 0)
        #expect(await setup.client.deliveryCounts.gaps == 0)
        await setup.stop()
    }

    @Test func whatTheServerNoLongerRetainsIsReportedAsAGapAndNothingElseIsMissing() async throws {
        let setup = try Setup(retained: 5)
        await setup.client.start()
        _ = await setup.probe.wait(timeout: .seconds(20)) { Self.feedNumbers($0.events).count >= 5 }
        await setup.client.stop()
        let stoppedAt = try #require(await setup.client.feedPositions["prices"])
        // Another client watches the feed move on by more than the server retains.
        try await Setup.watch(setup.server, until: stoppedAt + 20)
        await setup.client.start()
        let gapEvent = await setup.probe.next(timeout: .seconds(20)) {
            if case .delivery(.gap) = $0 { true } else { false }
        }
        guard case .delivery(.gap(let gap))? = gapEvent else {
            Issue.record("no gap reported")
            return
        }
        #expect(gap.stream == "prices" && gap.lastDelivered == stoppedAt && gap.firstReceived >= stoppedAt + 20 - 5)
        let snapshot = try #require(await setup.probe.wait(timeout: .seconds(20)) { snapshot in
            Self.feedNumbers(snapshot.events).last.map { $0 >= gap.firstReceived + 10 } ?? false
        })
        let numbers = Self.feedNumbers(snapshot.events)
        let jumps = zip(numbers, numbers.dropFirst()).filter { $1 != $0 + 1 }
        #expect(jumps.count == 1 && jumps.first?.0 == gap.lastDelivered && jumps.first?.1 == gap.firstReceived)
        #expect(await setup.client.deliveryCounts.gaps == 1)
        await setup.stop()
    }

    @Test func aSendNeverAcknowledgedExpiresAndOneAStopCatchesIsGivenUpWithTheirWrites() async throws {
        let setup = try Setup(acknowledgesFrom: .max)
        await setup.client.start()
        try await setup.client.waitUntilOpen(timeout: .seconds(10))
        try await setup.client.send(
            TestServerDeliveryProtocol.send(id: "late", body: "x"), id: "late", expiresAfter: .milliseconds(200))
        let expired = await setup.probe.next(timeout: .seconds(10)) {
            if case .delivery(.expired) = $0 { true } else { false }
        }
        guard case .delivery(.expired(let id, let message, let writes))? = expired else {
            Issue.record("not expired: \(String(describing: expired))")
            return
        }
        #expect(id == "late" && message == TestServerDeliveryProtocol.send(id: "late", body: "x") && writes == 1)
        try await Self.send(setup.client, "unanswered")
        try await setup.waitUntilTaken(2)
        await setup.client.stop()
        let event = await setup.probe.next(timeout: .seconds(10)) {
            if case .delivery(.gaveUp) = $0 { true } else { false }
        }
        guard case .delivery(let gaveUp)? = event else {
            Issue.record("not given up")
            return
        }
        #expect(gaveUp == .gaveUp(
            id: "unanswered", TestServerDeliveryProtocol.send(id: "unanswered", body: "body of unanswered"), writes: 1,
            reason: .stopped))
        #expect(await setup.client.queuedCount == 0)
        await setup.stop()
    }

    @Test func misuseIsRefusedWithATypedErrorAndNothingQueued() async throws {
        var plain = WebSocketClient.Configuration(url: URL(string: "ws://127.0.0.1:1/")!, pathMonitoring: .none)
        let off = try WebSocketClient(configuration: plain)
        await #expect(throws: AcknowledgedSendError.notEnabled) { try await off.send(.text("x"), id: "a") }
        plain.delivery.acknowledgements = TestServerDeliveryProtocol.acknowledgements()
        plain.outboxLimits = OutboxLimits(count: 1, bytes: 100)
        plain.maximumMessageSize = 10
        let client = try WebSocketClient(configuration: plain)
        try await client.send(.text("x"), id: "a")  // not started: waits in the outbox
        await #expect(throws: AcknowledgedSendError.duplicateID("a")) { try await client.send(.text("y"), id: "a") }
        await #expect(throws: AcknowledgedSendError.outboxFull) { try await client.send(.text("y"), id: "b") }
        await #expect(throws: AcknowledgedSendError.messageTooLarge(size: 11, limit: 10)) {
            try await client.send(.text("01234567890"), id: "c")
        }
        #expect(await client.queuedCount == 1)
        plain.delivery.acknowledgements?.maximumWrites = 0
        #expect(throws: WebSocketConfigurationError.self) { try WebSocketClient(configuration: plain) }
    }

    @Test func manyTasksSendingAtOnceAreEachAcknowledgedOnceAndTheServerTakesEachOnce() async throws {
        let setup = try Setup()
        await setup.client.start()
        try await setup.client.waitUntilOpen(timeout: .seconds(10))
        let client = setup.client
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for index in 0..<25 {
                        try await Self.send(client, "t\(task)-\(index)")
                    }
                }
            }
            try await group.waitForAll()
        }
        // A reset in the middle of the acknowledgements: whatever was not acknowledged yet goes again.
        await setup.proxy.resetConnections()
        let snapshot = try #require(await setup.probe.wait(timeout: .seconds(30)) { snapshot in
            Self.acknowledged(snapshot.events).count == 200
        })
        let record = setup.server.deliveryRecord
        #expect(record.takenCount == 200 && Set(record.taken).count == 200)
        #expect(Self.acknowledged(snapshot.events).keys.count == 200)
        // One task's sends reach the server in that task's order.
        for task in 0..<8 {
            let ours = record.taken.filter { $0.hasPrefix("t\(task)-") }
            #expect(ours == (0..<25).map { "t\(task)-\($0)" })
        }
        await setup.stop()
    }

    @Test func aSenderCancelledMidwayLeavesEverySendItQueuedAcknowledgedOnce() async throws {
        let setup = try Setup()
        await setup.client.start()
        try await setup.client.waitUntilOpen(timeout: .seconds(10))
        let client = setup.client
        let queued = Mutex<Set<String>>([])
        let sender = Task {
            var index = 0
            while !Task.isCancelled {
                let id = "c\(index)"
                do {
                    try await Self.send(client, id)
                    queued.withLock { _ = $0.insert(id) }
                } catch {
                    break  // the outbox is full: enough
                }
                index += 1
                await Task.yield()
            }
        }
        try await setup.waitUntilTaken(20)
        sender.cancel()
        await sender.value
        let ids = queued.withLock { $0 }
        let snapshot = try #require(await setup.probe.wait(timeout: .seconds(30)) { snapshot in
            Set(Self.acknowledged(snapshot.events).keys).isSuperset(of: ids)
        })
        #expect(Self.acknowledged(snapshot.events).values.allSatisfy { $0 == 1 })
        #expect(setup.server.deliveryRecord.takenCount == ids.count)
        await setup.stop()
    }

    @Test func aClientDroppedWithSendsWaitingForAcknowledgementClosesAndFreesThem() async throws {
        let server = try TestServer(scenario: .delivery(everyMilliseconds: 1_000).speakingDeliveryProtocol(
            everyMilliseconds: 1_000, acknowledges: false))
        var configuration = WebSocketClient.Configuration(
            url: URL(string: server.url())!, pathMonitoring: .none)
        configuration.delivery.acknowledgements = TestServerDeliveryProtocol.acknowledgements()
        weak var dropped: WebSocketClient?
        do {
            let client = try WebSocketClient(configuration: configuration)
            dropped = client
            await client.start()
            try await client.waitUntilOpen(timeout: .seconds(10))
            try await Self.send(client, "kept")
            try await server.waitUntil(timeout: .seconds(10)) { _ in server.deliveryRecord.takenCount == 1 }
        }
        let record = try await server.waitForEnd(ofConnection: 1, timeout: .seconds(10))
        #expect(record.closeReceived?.code == 1001)
        #expect(dropped == nil)
        await server.stop()
    }
}

extension WebSocketClientDeliveryTests.Setup {
    /// A plain client subscribed to `prices` until it has seen number `last`: a signal that the server's feed
    /// moved on, without a sleep.
    static func watch(_ server: TestServer, until last: UInt64) async throws {
        var configuration = WebSocketClient.Configuration(url: URL(string: server.url())!, pathMonitoring: .none)
        configuration.greeting = { [.text("subscribe prices")] }
        let client = try WebSocketClient(configuration: configuration)
        let probe = EventRecorder(client.events)
        await client.start()
        let seen = await probe.wait(timeout: .seconds(20)) { snapshot in
            WebSocketClientDeliveryTests.feedNumbers(snapshot.events).last.map { $0 >= last } ?? false
        }
        #expect(seen != nil, "the feed did not reach \(last)")
        await client.stop()
    }
}
#endif
