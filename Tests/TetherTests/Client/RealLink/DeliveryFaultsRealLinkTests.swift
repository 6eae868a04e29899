#if os(Linux)
import Foundation
import Glibc
import Synchronization
import Testing
import TetherCore
import TetherTestServer
import TetherTestSupport
@testable import Tether
import TetherTesting

/// Proof under faults (docs/delivery.md): a feed and a stream of acknowledged sends through a proxy that adds
/// latency, cuts every write in two, black-holes both ways, resets connections and cuts them in the middle of a frame,
/// on a seeded schedule. Every acknowledged send must reach the server's application once (after its
/// de-duplication); every feed number must be delivered once or lie in a reported gap; the sockets of the run and the
/// client's bounded state must stay flat, and in the minute-long run the process's resident memory too.
///
/// A short run (6 s) is part of `swift test`; the minute runs alone in CI (`TETHER_FAULT_TESTS=1`, `.ci/run`).
@Suite(.serialized, .timeLimit(.minutes(5))) struct DeliveryFaultsRealLinkTests {
    @Test func aFewSecondsOfFaultsLoseNothingAndDeliverNothingTwice() async throws {
        try await Self.run(seconds: 6, seed: 39, measuresMemory: false)
    }

    @Test(.enabled(if: ProcessInfo.processInfo.environment["TETHER_FAULT_TESTS"] == "1",
                   "a minute: runs alone in CI (TETHER_FAULT_TESTS=1)"))
    func aMinuteOfFaultsLosesNothingDeliversNothingTwiceAndStaysFlat() async throws {
        try await Self.run(seconds: 60, seed: 3_900, measuresMemory: true)
    }

    /// What the consumer of the client's events saw, folded as it comes: a few bytes per send and per feed number,
    /// so that the test's own memory does not hide the client's.
    final class Tally: Sendable {
        struct State {
            /// Per feed number: delivered how many times.
            var feed: [UInt8] = []
            var feedFirst: UInt64?
            var feedLast: UInt64 = 0
            var gaps: [FeedGap] = []
            /// Per send number (id `s<n>`): acknowledged how many times, and the writes of the last acknowledgement.
            var acknowledged: [UInt8] = []
            var acknowledgedCount = 0
            var maximumWrites = 0
            var lost: [String] = []  // expired or given up
            var opens = 0
        }

        let state = Mutex(State())
        private let changes = Mutex<[(condition: @Sendable (State) -> Bool, CheckedContinuation<Void, Never>)]>([])

        func fold(_ event: WebSocketEvent) {
            let snapshot = self.state.withLock { state -> State in
                switch event {
                case .message(let message, _):
                    guard let position = TestServerDeliveryProtocol.feedPosition(in: message) else { break }
                    let number = Int(position.sequence)
                    if state.feed.count <= number {
                        state.feed += [UInt8](repeating: 0, count: number + 1 - state.feed.count)
                    }
                    state.feed[number] &+= 1
                    state.feedFirst = state.feedFirst ?? position.sequence
                    state.feedLast = max(state.feedLast, position.sequence)
                case .delivery(.acknowledged(let id, let writes)):
                    guard let number = Int(id.dropFirst()) else { break }
                    if state.acknowledged.count <= number {
                        state.acknowledged += [UInt8](repeating: 0, count: number + 1 - state.acknowledged.count)
                    }
                    state.acknowledged[number] &+= 1
                    state.acknowledgedCount += 1
                    state.maximumWrites = max(state.maximumWrites, writes)
                case .delivery(.gap(let gap)):
                    state.gaps.append(gap)
                case .delivery(.expired(let id, _, _)), .delivery(.gaveUp(let id, _, _, _)):
                    state.lost.append(id)
                case .record(let record) where record.kind == .opened:
                    state.opens += 1
                case .stateChanged, .roundTrip, .outboxDropped, .unconfirmed, .record:
                    break
                }
                return state
            }
            let ready = self.changes.withLock { waiters -> [CheckedContinuation<Void, Never>] in
                var ready: [CheckedContinuation<Void, Never>] = []
                waiters.removeAll { waiter in
                    guard waiter.condition(snapshot) else { return false }
                    ready.append(waiter.1)
                    return true
                }
                return ready
            }
            for continuation in ready { continuation.resume() }
        }

        /// Returns once `condition` holds for what was folded (checked now and after every event), or after
        /// `timeout` (a guard, not a delay): whether it held.
        func wait(timeout: Duration, until condition: @escaping @Sendable (State) -> Bool) async -> Bool {
            let guardTask = Task {
                try? await Task.sleep(for: timeout)
                let expired = self.changes.withLock { waiters in
                    defer { waiters.removeAll() }
                    return waiters.map(\.1)
                }
                for continuation in expired { continuation.resume() }
            }
            defer { guardTask.cancel() }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                // Checked and registered under the waiters' lock: an event folded after the check finds the waiter
                // (`fold` takes the state's lock, then the waiters', never both at once).
                let holds = self.changes.withLock { waiters in
                    let holds = self.state.withLock { condition($0) }
                    if !holds { waiters.append((condition, continuation)) }
                    return holds
                }
                if holds { continuation.resume() }
            }
            return self.state.withLock { condition($0) }
        }
    }

    /// The faults the proxy plays, by name, with how often each came.
    struct Faults: CustomStringConvertible {
        var resets = 0
        var cuts = 0
        var blackHoles = 0
        var description: String { "\(self.resets) resets, \(self.cuts) cuts mid-frame, \(self.blackHoles) black holes" }
    }

    /// The resident set size of the process, from `/proc/self/statm`.
    static func residentBytes() -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return nil }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    static func run(seconds: Int, seed: UInt64, measuresMemory: Bool) async throws {
        var serverConfiguration = TestServer.Configuration(recordLimit: 0, endedConnectionLimit: 10)
        serverConfiguration.deliveryIDLimit = 100_000
        let server = try TestServer(
            configuration: serverConfiguration,
            scenario: .delivery(streams: ["prices"], everyMilliseconds: 20, retained: 5_000))
        let proxy = try FaultProxy(upstreamPort: server.port, latency: .milliseconds(15), splitting: true)
        var configuration = WebSocketClient.Configuration(
            url: URL(string: "ws://127.0.0.1:\(proxy.port)/faults")!, heartbeatInterval: .milliseconds(250),
            heartbeatTimeout: .milliseconds(400), connectTimeout: .seconds(3),
            backoff: BackoffPolicy(base: .milliseconds(50), factor: 2, cap: .milliseconds(400)),
            closeTimeout: .milliseconds(300),
            pathMonitoring: .none)
        configuration.recordsHeartbeats = false
        configuration.delivery.acknowledgements = TestServerDeliveryProtocol.acknowledgements()
        configuration.delivery.feeds = TestServerDeliveryProtocol.feeds(["prices"])
        let client = try WebSocketClient(configuration: configuration, randomSeed: seed)
        let tally = Tally()
        let consumer = Task {
            for await event in client.events {
                tally.fold(event)
            }
        }
        await client.start()
        try await client.waitUntilOpen(timeout: .seconds(10))

        let deadline = ContinuousClock.now + .seconds(seconds)
        let sent = Atomic(0)
        let sender = Task {
            while ContinuousClock.now < deadline {
                let number = sent.load(ordering: .relaxed) + 1
                do {
                    try await client.send(TestServerDeliveryProtocol.send(id: "s\(number)", body: "\(number)"),
                                          id: "s\(number)")
                    sent.store(number, ordering: .relaxed)
                } catch {
                    Issue.record("send s\(number) refused: \(error)")
                    return
                }
                try? await Task.sleep(for: .milliseconds(15))  // pacing, not a wait for anything
            }
        }

        // The faults, on a seeded schedule; the sockets of the run and the memory sampled between them.
        var random = SplitMix64(seed: seed)
        var faults = Faults()
        var socketsMaximum = 0
        var memory: [(second: Int, bytes: Int)] = []
        let started = ContinuousClock.now
        while ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(Int(300 + random.next() % 900)))  // the schedule's pace
            switch random.next() % 10 {
            case 0..<3:
                faults.resets += 1
                await proxy.resetConnections()
            case 3..<6:
                faults.cuts += 1
                await proxy.cutConnections()
            default:
                faults.blackHoles += 1
                proxy.blackHole(true)
                try await Task.sleep(for: .milliseconds(Int(200 + random.next() % 1_000)))  // the hole's length
                proxy.blackHole(false)
            }
            let sockets = SocketInventory.openConnections(port: proxy.port).count
                + SocketInventory.openConnections(port: server.port).count
            socketsMaximum = max(socketsMaximum, sockets)
            if measuresMemory, let bytes = Self.residentBytes() {
                memory.append(((ContinuousClock.now - started).milliseconds / 1_000, bytes))
            }
        }
        await sender.value
        proxy.blackHole(false)
        let sentCount = sent.load(ordering: .relaxed)

        // Healed: every send is acknowledged, and the feed goes on past where it was.
        let feedAtHeal = tally.state.withLock { $0.feedLast }
        let settled = await tally.wait(timeout: .seconds(60)) { state in
            state.acknowledgedCount >= sentCount && state.feedLast >= feedAtHeal + 25
        }
        #expect(settled, "not settled: \(tally.state.withLock { ($0.acknowledgedCount, $0.feedLast) }) of \(sentCount)")
        let counts = await client.deliveryCounts
        let queued = await client.queuedCount
        await client.stop()
        consumer.cancel()
        let state = tally.state.withLock { $0 }
        let record = server.deliveryRecord

        // Every acknowledged send reached the server's application, once, and was acknowledged once.
        #expect(state.lost.isEmpty, "expired or given up: \(state.lost.prefix(10))")
        let taken = Set(record.taken)
        let notTaken = (1...sentCount).map { "s\($0)" }.filter { !taken.contains($0) }
        #expect(notTaken.isEmpty, "never reached the server: \(notTaken.prefix(10))")
        #expect(record.takenCount == sentCount && taken.count == sentCount)
        let acknowledgedTwice = state.acknowledged.indices.filter { state.acknowledged[$0] > 1 }
        let neverAcknowledged = (1...sentCount).filter { $0 >= state.acknowledged.count || state.acknowledged[$0] == 0 }
        #expect(acknowledgedTwice.isEmpty && neverAcknowledged.isEmpty,
                "twice: \(acknowledgedTwice.prefix(10)), never: \(neverAcknowledged.prefix(10))")
        #expect(queued == 0)

        // Every feed number from the first delivered to the last: delivered once, or inside a reported gap.
        let first = Int(try #require(state.feedFirst))
        let last = Int(state.feedLast)
        let inGap = { (number: Int) in
            state.gaps.contains { UInt64(number) > $0.lastDelivered && UInt64(number) < $0.firstReceived }
        }
        let twice = (first...last).filter { state.feed[$0] > 1 }
        let missing = (first...last).filter { state.feed[$0] == 0 && !inGap($0) }
        #expect(twice.isEmpty && missing.isEmpty, "twice: \(twice.prefix(10)), missing: \(missing.prefix(10))")

        // Flat: the sockets of the run never more than a few connections' worth, and none left.
        #expect(socketsMaximum <= 16, "\(socketsMaximum) sockets at once")
        await proxy.stop()
        await server.stop()
        let left = SocketInventory.openConnections(port: proxy.port).count
            + SocketInventory.openConnections(port: server.port).count
        #expect(left == 0, "\(left) sockets left")
        #expect(proxy.liveConnections == 0)

        var memoryLine = ""
        if measuresMemory {
            // After a warm-up of a quarter of the run, the resident size does not grow with the run: the last
            // quarter's average within 8 MiB of the second quarter's.
            let quarter = seconds / 4
            let early = memory.filter { $0.second >= quarter && $0.second < 2 * quarter }.map(\.bytes)
            let late = memory.filter { $0.second >= 3 * quarter }.map(\.bytes)
            let earlyAverage = early.isEmpty ? 0 : early.reduce(0, +) / early.count
            let lateAverage = late.isEmpty ? 0 : late.reduce(0, +) / late.count
            #expect(!early.isEmpty && !late.isEmpty)
            #expect(lateAverage - earlyAverage < 8 << 20,
                    "resident \(earlyAverage >> 10) KiB then \(lateAverage >> 10) KiB")
            memoryLine = ", resident \(earlyAverage >> 20) MiB then \(lateAverage >> 20) MiB"
        }
        print("delivery under faults, \(seconds) s: \(faults); \(state.opens) opens; \(sentCount) sends, "
            + "\(counts.rewrites) written again, \(record.repeats) repeats dropped by the server, most writes of one "
            + "\(state.maximumWrites); feed \(first)...\(last), \(counts.duplicatesDropped) duplicates dropped, "
            + "\(state.gaps.count) gaps; at most \(socketsMaximum) sockets\(memoryLine)")
    }
}
#endif
