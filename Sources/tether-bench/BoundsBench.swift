// Memory bounds under attack: `swift run -c release tether-bench bounds [options]`.
//
// The five scenarios of issue 13 (and the echo again with the largest messages), each measured in this process
// while the attacker runs in a child process (the same binary, `tether-bench bounds --peer KIND ...`,
// BoundsPeer.swift: raw sockets, hand-built frames), so that nothing the attacker buffers counts here. For each,
// `_peak_kib` is the most this process's RSS grew above its baseline (the RSS right before the scenario, once the
// child runs), and `_after_kib` the growth 300 ms after the attacker left and the measured side saw it, with the
// client or server still alive (RSS as the kernel counts it: memory the allocator keeps for reuse counts too; stderr
// also shows it after malloc_trim):
//
//   client_ping_flood  a `WebSocketClient` whose server floods 1 M pings (125-byte payload) and never reads
//                      reference: client_ping_flood_pings_written, what the attacker wrote before it was pushed back
//   slow_consumer      a client whose consumer spends 10 µs per event while the server sends 5 M 1-byte messages, for
//                      at most `--slow-seconds` (default 5; at 10 µs an event, 5 M take more than 50 s)
//                      references: slow_consumer_messages_written (taken by the attacker's kernel; what is still there
//                      when it leaves is never delivered), slow_consumer_messages_read (while slow),
//                      slow_consumer_event_buffer_peak_kib (`eventBufferPeakWeight`, what the watermark counted)
//   deaf_peer          a client sending 300 MB in 1 MiB binary messages to a server that never reads; the sender is
//                      stopped once it made no progress for 1 s (or after 3 s)
//                      reference: deaf_peer_bytes_sent, the messages `send` returned for
//   server_echo        `TestServer` (scenario echo) echoing 1 GiB of 1 MiB messages to a client that never reads
//                      references: server_echo_bytes_written (the attacker), server_echo_bytes_echoed (the server)
//   server_echo_16m    the same with 16 MiB messages, the largest the server accepts by default
//   server_ping_flood  `TestServer` while a client floods 1 M pings (125 bytes) and reads the pongs; `_after_kib` once
//                      the flood has ended and the client left
//                      references: server_ping_flood_pings_sent (the attacker), server_ping_flood_pings_recorded
//                      (the server's count)
//   target_kib         65536: the target for every peak, with the default 16 MiB maximum message size
//
// The clients use the default configuration but for a 1-hour heartbeat (out of the way) and `pathMonitoring: .none`;
// the server the default `TestServer` bounds. The peak is VmHWM from /proc/self/status, reset to the current RSS at
// the baseline by writing 5 to /proc/self/clear_refs, or the highest of samples of /proc/self/statm taken every 5 ms
// when that is higher (the kernel's counters are approximate) or the reset is refused. Each scenario runs in a new
// process of this binary (`--scenario-process`), after a warm-up exchange, so that none starts from a heap that an
// earlier one left (glibc keeps much of what is freed, and reuses it).
//
// Options:
//   --only NAME[,NAME...]  run only these scenarios (names as above)
//   --in-process           run them one after the other in this process instead (malloc_trim(0) after each)
//   --scale F              multiply the attack sizes (pings, messages, bytes) by F (default 1: the issue's sizes)
//   --slow-seconds S       how long the slow consumer is attacked at most (default 5; 100 lets all 5 M through)
//   --slow-message-size B  the size of the slow consumer's messages (default 1)
//   --ping-size B          the ping payload of both ping floods (default 125, the most a ping carries)
//   --echo-message-size B  the message size of server_echo (default 1 MiB; up to the 16 MiB maximum)
//   --peer KIND ...        (internal) run as the attacker; see BoundsPeer.swift
#if os(Linux)
import Foundation
import Glibc
import Synchronization
import Tether
import TetherCore
import TetherTestServer

enum BoundsBench {
    /// 64 MiB: the most any scenario may grow the process above its baseline.
    static let targetKiB = 64 << 10

    enum ScenarioName: String, CaseIterable {
        case clientPingFlood = "client_ping_flood"
        case slowConsumer = "slow_consumer"
        case deafPeer = "deaf_peer"
        case serverEcho = "server_echo"
        case serverEchoLargest = "server_echo_16m"
        case serverPingFlood = "server_ping_flood"
    }

    struct Options {
        /// How the scenarios are run.
        enum Mode {
            /// Each in a process of its own (the default), so that none starts from a heap another one left.
            case processPerScenario
            /// One after the other in this process (`--in-process`).
            case inProcess
            /// In this process, for a parent running each scenario in its own (`--scenario-process`): no target line.
            case scenarioProcess
        }

        var mode = Mode.processPerScenario
        /// The options a scenario's process gets from its parent.
        var forwarded: [String] = []
        var scenarios = Set(ScenarioName.allCases)
        var scale = 1.0
        var slowSeconds = 5.0
        var slowMessageSize = 1
        var pingSize = 125
        var echoMessageSize = 1 << 20

        /// `count` times the scale, at least 1.
        func scaled(_ count: Int) -> Int {
            max(1, Int((Double(count) * self.scale).rounded()))
        }

        init() {}

        init(_ arguments: [String]) throws(EchoBench.Failure) {
            var index = 0
            func value() throws(EchoBench.Failure) -> String {
                guard index + 1 < arguments.count else { throw .init("\(arguments[index]) needs a value") }
                index += 1
                return arguments[index]
            }
            while index < arguments.count {
                let option = arguments[index]
                if ["--scale", "--slow-seconds", "--slow-message-size", "--ping-size", "--echo-message-size"]
                    .contains(option), index + 1 < arguments.count {
                    self.forwarded += [option, arguments[index + 1]]
                }
                switch option {
                case "--in-process":
                    self.mode = .inProcess
                case "--scenario-process":
                    self.mode = .scenarioProcess
                case "--only":
                    let names = try value().split(separator: ",").map { name in
                        ScenarioName(rawValue: name.hasPrefix("bounds.") ? String(name.dropFirst(7)) : String(name))
                    }
                    guard !names.isEmpty, names.allSatisfy({ $0 != nil }) else {
                        let known = ScenarioName.allCases.map(\.rawValue).joined(separator: ", ")
                        throw .init("--only takes scenario names: \(known)")
                    }
                    self.scenarios = Set(names.compactMap { $0 })
                case "--scale":
                    guard let scale = Double(try value()), scale > 0 else { throw .init("bad --scale") }
                    self.scale = scale
                case "--slow-seconds":
                    guard let seconds = Double(try value()), seconds > 0, seconds <= 120 else {
                        throw .init("bad --slow-seconds (0 to 120)")
                    }
                    self.slowSeconds = seconds
                case "--slow-message-size":
                    guard let size = Int(try value()), (0...(1 << 20)).contains(size) else {
                        throw .init("bad --slow-message-size (0 to 1 MiB)")
                    }
                    self.slowMessageSize = size
                case "--ping-size":
                    guard let size = Int(try value()), (0...125).contains(size) else {
                        throw .init("bad --ping-size (0 to 125)")
                    }
                    self.pingSize = size
                case "--echo-message-size":
                    guard let size = Int(try value()), (1...(16 << 20)).contains(size) else {
                        throw .init("bad --echo-message-size (1 to 16 MiB)")
                    }
                    self.echoMessageSize = size
                case let other:
                    throw .init("unknown option \(other)")
                }
                index += 1
            }
        }
    }

    static func run(_ arguments: [String]) async {
        if arguments.first == "--peer" {
            BoundsPeer.run(Array(arguments.dropFirst()))
        }
        let options: Options
        do {
            options = try Options(arguments)
        } catch {
            EchoBench.progress("tether-bench bounds: \(error)")
            exit(2)
        }
        // Writing to a child that has exited must fail, not kill this process.
        signal(SIGPIPE, SIG_IGN)
        do {
            switch options.mode {
            case .processPerScenario:
                print("bounds.target_kib \(self.targetKiB)")
                fflush(nil)
                for scenario in ScenarioName.allCases where options.scenarios.contains(scenario) {
                    try await self.runInOwnProcess(scenario, options)
                }
            case .inProcess:
                print("bounds.target_kib \(self.targetKiB)")
                fflush(nil)
                try await self.measure(options)
            case .scenarioProcess:
                try await self.measure(options)
            }
        } catch {
            EchoBench.progress("tether-bench bounds: \(error)")
            exit(1)
        }
    }

    /// Runs `scenario` in a new process of this binary (`--scenario-process`) and prints its figures.
    static func runInOwnProcess(_ scenario: ScenarioName, _ options: Options) async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = ["bounds", "--scenario-process", "--only", scenario.rawValue] + options.forwarded
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        // A scenario ends by itself within its own timeouts: this only guards against a hang.
        let limit = Duration.seconds(options.slowSeconds + 180)
        let watchdog = Task {
            do { try await Task.sleep(for: limit) } catch { return }
            EchoBench.progress("bounds: \(scenario.rawValue) still running after \(limit), ending it")
            process.terminate()
            try? await Task.sleep(for: .seconds(1))
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
        // Its figures, once it has ended (its stderr is this process's).
        let figures = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        watchdog.cancel()
        print(String(decoding: figures, as: UTF8.self), terminator: "")
        fflush(nil)
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            throw EchoBench.Failure("\(scenario.rawValue) failed (status \(process.terminationStatus))")
        }
    }

    static func measure(_ options: Options) async throws {
        EchoBench.progress("bounds: load average \(IdleBench.loadAverage())")
        try await self.warmUp()
        for scenario in ScenarioName.allCases where options.scenarios.contains(scenario) {
            let clock = ContinuousClock()
            let start = clock.now
            switch scenario {
            case .clientPingFlood: try await self.clientPingFlood(options)
            case .slowConsumer: try await self.slowConsumer(options)
            case .deafPeer: try await self.deafPeer(options)
            case .serverEcho:
                try await self.serverEcho(options, name: scenario.rawValue, size: options.echoMessageSize)
            case .serverEchoLargest:
                try await self.serverEcho(options, name: scenario.rawValue, size: 16 << 20)
            case .serverPingFlood: try await self.serverPingFlood(options)
            }
            fflush(nil)
            EchoBench.progress("bounds: \(scenario.rawValue) took \(clock.now - start)")
        }
    }

    /// One client and one server in this process exchange a message first, so that what is paid once per process
    /// (the shared event loop, the pool's threads, runtime metadata) is not charged to the first scenario.
    static func warmUp() async throws {
        let server = try TestServer(configuration: .init(recordLimit: 0), scenario: .echo)
        do {
            let session = try ClientSession(url: URL(string: server.url(path: "/warm-up"))!, signalsMessages: true)
            try await session.open()
            try await session.client.send(.binary(Data(count: 64)))
            try await session.wait("the warm-up echo", timeout: .seconds(10)) {
                $0.messages.load(ordering: .relaxed) == 1
            }
            await session.finish()
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
        self.trimAllocator()
    }

    // MARK: - Scenarios

    /// (1) The server floods pings and never reads: the client answers until its write queue passes the outbound
    /// high watermark, then stops reading; TCP pushes the attacker back.
    static func clientPingFlood(_ options: Options) async throws {
        let pings = options.scaled(1_000_000)
        let peer = try PeerProcess(
            kind: .pingFloodServer, count: pings, size: options.pingSize, seconds: 10, stallMilliseconds: 500)
        try await peer.whileRunning {
            let port = try await peer.expect("port")["port"] ?? 0
            let meter = PeakMeter()
            let session = try ClientSession(url: URL(string: "ws://127.0.0.1:\(port)/bounds")!)
            try await session.open()
            let attack = try await peer.expect("attacked", timeout: .seconds(20))
            EchoBench.progress("bounds: ping flood \(attack), RSS +\(meter.growthKiB()) KiB")
            try await peer.leave()
            try await session.wait("the client to see the attacker leave", timeout: .seconds(10)) {
                $0.ended.load(ordering: .relaxed)
            }
            let after = try await meter.settledGrowthKiB()
            await session.finish()
            self.report(
                "client_ping_flood", meter: meter, after: after,
                references: [("pings_written", attack["frames"] ?? 0)])
        }
    }

    /// (2) The server sends 1-byte messages as fast as it can while the consumer spends 10 µs on each event: the
    /// events not read yet pass the inbound high watermark, the client stops reading, TCP pushes the server back.
    static func slowConsumer(_ options: Options) async throws {
        let messages = options.scaled(5_000_000)
        let peer = try PeerProcess(
            kind: .messageFloodServer, count: messages, size: options.slowMessageSize, seconds: options.slowSeconds,
            stallMilliseconds: Int(options.slowSeconds * 1000) + 1000)
        try await peer.whileRunning {
            let port = try await peer.expect("port")["port"] ?? 0
            let meter = PeakMeter()
            let session = try ClientSession(
                url: URL(string: "ws://127.0.0.1:\(port)/bounds")!, nanosecondsPerEvent: 10_000)
            try await session.open()
            let attack = try await peer.expect("attacked", timeout: .seconds(options.slowSeconds + 20))
            let readWhileSlow = session.watch.messages.load(ordering: .relaxed)
            EchoBench.progress(
                "bounds: message flood \(attack), \(readWhileSlow) read, "
                    + "\(session.watch.holds.load(ordering: .relaxed)) reading_held, RSS +\(meter.growthKiB()) KiB; "
                    + "an event takes \(WebSocketEvent.bufferOverhead) B in the client's buffer")
            try await peer.leave()
            EchoBench.progress("bounds: the attacker left, RSS +\(meter.growthKiB()) KiB")
            // The consumer catches up at full speed, then sees the end after the last message.
            session.watch.nanosecondsPerEvent.store(0, ordering: .relaxed)
            try await session.wait("the client to see the attacker leave", timeout: .seconds(60)) {
                $0.ended.load(ordering: .relaxed)
            }
            EchoBench.progress(
                "bounds: the consumer caught up (\(session.watch.messages.load(ordering: .relaxed)) messages), "
                    + "RSS +\(meter.growthKiB()) KiB")
            let after = try await meter.settledGrowthKiB()
            let bufferPeak = session.client.eventBufferPeakWeight
            await session.finish()
            self.report(
                "slow_consumer", meter: meter, after: after,
                references: [
                    ("messages_written", attack["frames"] ?? 0), ("messages_read", readWhileSlow),
                    ("event_buffer_peak_kib", bufferPeak / 1024),
                ])
        }
    }

    /// (3) The client sends 1 MiB messages to a server that never reads: `send` suspends once the write queue is above
    /// the outbound high watermark.
    static func deafPeer(_ options: Options) async throws {
        let messageSize = 1 << 20
        let count = options.scaled(300_000_000) / messageSize
        let peer = try PeerProcess(kind: .deafServer, count: 0, size: 0, seconds: 10, stallMilliseconds: 500)
        try await peer.whileRunning {
            let port = try await peer.expect("port")["port"] ?? 0
            let meter = PeakMeter()
            let session = try ClientSession(url: URL(string: "ws://127.0.0.1:\(port)/bounds")!)
            try await session.open()
            _ = try await peer.expect("attacked")
            let progress = SendProgress()
            let client = session.client
            let sender = Task {
                let message = WebSocketMessage.binary(Data(repeating: 0x2A, count: messageSize))
                for _ in 0..<count {
                    do {
                        try await client.send(message)
                    } catch {
                        progress.error.withLock { $0 = "\(error)" }
                        break
                    }
                    progress.sent.add(1, ordering: .relaxed)
                }
                progress.finished.store(true, ordering: .relaxed)
            }
            let blocked = try await self.watchSender(progress, stall: .seconds(1), limit: .seconds(3))
            let sent = progress.sent.load(ordering: .relaxed)
            EchoBench.progress(
                "bounds: \(sent) of \(count) messages sent, \(blocked ? "blocked" : "not blocked"), "
                    + "RSS +\(meter.growthKiB()) KiB")
            try await peer.leave()
            try await session.wait("the client to see the server leave", timeout: .seconds(10)) {
                $0.ended.load(ordering: .relaxed)
            }
            // The suspended `send` throws once the connection has ended.
            let clock = ContinuousClock()
            let deadline = clock.now + .seconds(10)
            while !progress.finished.load(ordering: .relaxed) {
                guard clock.now < deadline else { throw EchoBench.Failure("the blocked send did not return") }
                try await Task.sleep(for: .milliseconds(10))
            }
            await sender.value
            EchoBench.progress("bounds: the blocked send threw \(progress.error.withLock { $0 } ?? "nothing")")
            let after = try await meter.settledGrowthKiB()
            await session.finish()
            self.report(
                "deaf_peer", meter: meter, after: after, references: [("bytes_sent", sent * messageSize)])
        }
    }

    /// (4) `TestServer` echoes to a client that sends and never reads: the server stops reading that connection while
    /// more than its outbound high watermark waits for the client.
    /// - Parameter size: the message size: 1 MiB, or the largest the server accepts by default (16 MiB), whose echo
    ///   the server holds whole while it waits for the client.
    static func serverEcho(_ options: Options, name: String, size: Int) async throws {
        let count = max(1, options.scaled(1 << 30) / size)
        let peer = try PeerProcess(
            kind: .echoFloodClient, count: count, size: size, seconds: 10, stallMilliseconds: 500)
        try await peer.whileRunning {
            let meter = PeakMeter()
            try await self.withServer { server in
                try peer.command("connect \(server.port)")
                _ = try await peer.expect("open")
                let attack = try await peer.expect("attacked", timeout: .seconds(20))
                let echoed = server.connection(1)?.sentMessageBytes ?? 0
                EchoBench.progress("bounds: echo flood \(attack), \(echoed) B echoed, RSS +\(meter.growthKiB()) KiB")
                try await peer.leave()
                try await server.waitForEnd(ofConnection: 1, timeout: .seconds(10))
                let after = try await meter.settledGrowthKiB()
                self.report(
                    name, meter: meter, after: after,
                    references: [("bytes_written", attack["bytes"] ?? 0), ("bytes_echoed", echoed)])
            }
        }
    }

    /// (5) `TestServer` while a client floods pings (reading the pongs, so that the whole flood arrives), then after
    /// the client has left: the records keep their first 1,000 pings and pongs and count the rest.
    static func serverPingFlood(_ options: Options) async throws {
        let pings = options.scaled(1_000_000)
        let peer = try PeerProcess(
            kind: .pingFloodClient, count: pings, size: options.pingSize, seconds: 30, stallMilliseconds: 2000)
        try await peer.whileRunning {
            let meter = PeakMeter()
            try await self.withServer { server in
                try peer.command("connect \(server.port)")
                _ = try await peer.expect("open")
                let attack = try await peer.expect("attacked", timeout: .seconds(40))
                let sent = attack["frames"] ?? 0
                // The last pings may still be in the server's socket buffer.
                try await server.waitUntil(timeout: .seconds(20)) { records in
                    (records.first?.pingsReceived.total ?? 0) >= sent
                }
                let record = server.connection(1)
                EchoBench.progress(
                    "bounds: ping flood \(attack); the server recorded \(record?.pingsReceived.total ?? 0) pings "
                        + "(kept \(record?.pingsReceived.count ?? 0)), \(record?.pongsSent.total ?? 0) pongs; "
                        + "RSS +\(meter.growthKiB()) KiB")
                try await peer.leave()
                try await server.waitForEnd(ofConnection: 1, timeout: .seconds(10))
                let after = try await meter.settledGrowthKiB()
                self.report(
                    "server_ping_flood", meter: meter, after: after,
                    references: [("pings_sent", sent), ("pings_recorded", record?.pingsReceived.total ?? 0)])
            }
        }
    }

    // MARK: - Helpers

    /// A `TestServer` (echo, default bounds) for `body`, stopped after it however it ends.
    static func withServer(_ body: (TestServer) async throws -> Void) async throws {
        let server = try TestServer(scenario: .echo)
        do {
            try await body(server)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    /// Watches the sender until it has finished, made no progress for `stall` (true: it is blocked), or `limit` has
    /// passed.
    static func watchSender(_ progress: SendProgress, stall: Duration, limit: Duration) async throws -> Bool {
        let clock = ContinuousClock()
        let start = clock.now
        var lastCount = progress.sent.load(ordering: .relaxed)
        var lastChange = start
        while !progress.finished.load(ordering: .relaxed), clock.now - start < limit {
            try await Task.sleep(for: .milliseconds(20))
            let count = progress.sent.load(ordering: .relaxed)
            if count != lastCount {
                lastCount = count
                lastChange = clock.now
            } else if clock.now - lastChange >= stall {
                return true
            }
        }
        return false
    }

    /// Prints a scenario's figures, and on stderr how they were taken.
    static func report(_ name: String, meter: PeakMeter, after: Int, references: [(String, Int)]) {
        let peak = meter.finish()
        print("bounds.\(name)_peak_kib \(peak.growthKiB)")
        print("bounds.\(name)_after_kib \(after)")
        for (reference, value) in references {
            print("bounds.\(name)_\(reference) \(value)")
        }
        let now = PeakMeter.residentKiB() - meter.baselineKiB
        // What the allocator keeps for reuse, as opposed to what is still in use.
        self.trimAllocator()
        let trimmed = PeakMeter.residentKiB() - meter.baselineKiB
        let source = peak.fromHighWaterMark ? "VmHWM and samples" : "samples only"
        EchoBench.progress(
            "bounds: \(name): baseline \(meter.baselineKiB) KiB; peak +\(peak.growthKiB) KiB (\(source)), "
                + "sampled every 5 ms +\(peak.sampledGrowthKiB) KiB; after +\(after) KiB; "
                + "now +\(now) KiB, +\(trimmed) KiB after malloc_trim(0)")
    }

    /// glibc's `malloc_trim(0)`: hands the free memory the allocator keeps back to the system (looked up at run time,
    /// as the Glibc module does not declare it). The bench calls it between scenarios, so that each starts from a
    /// trimmed heap, and to tell memory still in use from memory kept for reuse.
    static func trimAllocator() {
        typealias Trim = @convention(c) (Int) -> Int32
        guard let symbol = dlsym(nil, "malloc_trim") else { return }
        _ = unsafeBitCast(symbol, to: Trim.self)(0)
    }

    /// Spends `nanoseconds` on the calling thread, as a consumer's work would.
    static func work(nanoseconds: Int) {
        let clock = ContinuousClock()
        let end = clock.now + .nanoseconds(nanoseconds)
        while clock.now < end {}
    }
}

/// How far the deaf-peer sender got.
final class SendProgress: Sendable {
    let sent = Atomic<Int>(0)
    let finished = Atomic<Bool>(false)
    let error = Mutex<String?>(nil)
}

// MARK: - The measured client

/// What a client's consumer saw, shared with the measuring task.
final class ClientWatch: Sendable {
    let open = Atomic<Bool>(false)
    /// The connection was open and is no longer.
    let ended = Atomic<Bool>(false)
    let messages = Atomic<Int>(0)
    /// `reading_held` records.
    let holds = Atomic<Int>(0)
    /// What the consumer spends on each event.
    let nanosecondsPerEvent: Atomic<Int>
    /// Wakes the measuring task when `open` or `ended` changes, and at each message when `signalsMessages`.
    let changes: AsyncStream<Void>.Continuation
    let signalsMessages: Bool

    init(nanosecondsPerEvent: Int, signalsMessages: Bool, changes: AsyncStream<Void>.Continuation) {
        self.nanosecondsPerEvent = Atomic(nanosecondsPerEvent)
        self.signalsMessages = signalsMessages
        self.changes = changes
    }
}

/// A measured `WebSocketClient` and the task that consumes its events.
final class ClientSession {
    let client: WebSocketClient
    let watch: ClientWatch
    private var changes: AsyncStream<Void>.Iterator
    private var consumer: Task<Void, Never>?

    /// - Parameters:
    ///   - nanosecondsPerEvent: what the consumer spends on each event (0: nothing).
    ///   - signalsMessages: a wait wakes at each message (for a wait on messages; it costs the consumer a little).
    init(url: URL, nanosecondsPerEvent: Int = 0, signalsMessages: Bool = false) throws {
        // The default configuration, but for the heartbeat (out of the way) and no path monitor.
        let configuration = WebSocketConfiguration(
            url: url, heartbeatInterval: .seconds(3600), heartbeatTimeout: .seconds(60), pathMonitoring: .none)
        self.client = try WebSocketClient(configuration: configuration)
        let (changes, sink) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        self.changes = changes.makeAsyncIterator()
        self.watch = ClientWatch(
            nanosecondsPerEvent: nanosecondsPerEvent, signalsMessages: signalsMessages, changes: sink)
    }

    /// Starts the consumer and the client, and waits for the connection to open.
    func open() async throws {
        let events = self.client.events
        let watch = self.watch
        self.consumer = Task {
            for await event in events {
                let work = watch.nanosecondsPerEvent.load(ordering: .relaxed)
                if work > 0 { BoundsBench.work(nanoseconds: work) }
                switch event {
                case .message:
                    watch.messages.add(1, ordering: .relaxed)
                    if watch.signalsMessages { watch.changes.yield() }
                case .stateChanged(let state, _):
                    let isOpen = state.phase == .open
                    guard isOpen != watch.open.load(ordering: .relaxed) else { continue }
                    watch.open.store(isOpen, ordering: .relaxed)
                    if !isOpen { watch.ended.store(true, ordering: .relaxed) }
                    watch.changes.yield()
                case .record(let record):
                    if record.kind == .readingHeld { watch.holds.add(1, ordering: .relaxed) }
                case .roundTrip, .outboxDropped, .unconfirmed, .delivery:
                    continue
                }
            }
        }
        await self.client.start()
        try await self.wait("the client to open", timeout: .seconds(10)) { $0.open.load(ordering: .relaxed) }
    }

    /// Waits until `condition` holds, checking it at each change the consumer signals.
    /// - Parameter timeout: a guard against a run that can never finish, not a delay.
    func wait(_ what: String, timeout: Duration, until condition: (ClientWatch) -> Bool) async throws {
        let deadline = ContinuousClock.now + timeout
        while !condition(self.watch) {
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero else { throw EchoBench.Failure("timed out waiting for \(what)") }
            let sink = self.watch.changes
            // Cancelled once a change came: then it must not wake the next wait.
            let guardTask = Task {
                do { try await Task.sleep(for: remaining) } catch { return }
                sink.yield()
            }
            var changes = self.changes
            _ = await changes.next()
            self.changes = changes
            guardTask.cancel()
        }
    }

    /// Stops the client; the consumer ends once it has read what is buffered.
    func finish() async {
        await self.client.stop()
        self.consumer?.cancel()
    }
}

// MARK: - The attacker's process

/// `tether-bench bounds --peer KIND ...` in a child process, with its lines (stdout) and commands (stdin).
final class PeerProcess {
    /// A line from the child, or a wake-up of a wait's timeout.
    private enum Output {
        case line(String)
        case tick
    }

    let kind: BoundsPeer.Kind
    private let input = Pipe()
    private let output = Pipe()
    private let process: Process
    private var lines: AsyncStream<Output>.Iterator
    private let sink: AsyncStream<Output>.Continuation

    init(kind: BoundsPeer.Kind, count: Int, size: Int, seconds: Double, stallMilliseconds: Int) throws {
        self.kind = kind
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = [
            "bounds", "--peer", kind.rawValue, "--count", "\(count)", "--size", "\(size)", "--seconds", "\(seconds)",
            "--stall-ms", "\(stallMilliseconds)",
        ]
        process.standardInput = self.input
        process.standardOutput = self.output
        self.process = process
        let (lines, sink) = AsyncStream.makeStream(of: Output.self, bufferingPolicy: .unbounded)
        self.lines = lines.makeAsyncIterator()
        self.sink = sink
        // `run` closes this process's copies of the child's ends of both pipes.
        try process.run()
        // The reader owns a duplicate of the pipe's end, which it closes at the end of the child's output.
        let descriptor = dup(self.output.fileHandleForReading.fileDescriptor)
        Thread.detachNewThread {
            var pending: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = read(descriptor, &chunk, chunk.count)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { break }
                pending.append(contentsOf: chunk[..<count])
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    sink.yield(.line(String(decoding: pending[..<newline], as: UTF8.self)))
                    pending.removeSubrange(...newline)
                }
            }
            close(descriptor)
            sink.finish()
        }
        EchoBench.progress("bounds: peer \(kind.rawValue) is process \(process.processIdentifier)")
    }

    /// Runs `body`, then ends the child, however `body` ends.
    func whileRunning(_ body: () async throws -> Void) async throws {
        do {
            try await body()
        } catch {
            await self.stop()
            throw error
        }
        await self.stop()
    }

    /// Waits for the child's line `word key=value ...` and returns its values (other lines are shown and skipped).
    func expect(_ word: String, timeout: Duration = .seconds(10)) async throws -> [String: Int] {
        let deadline = ContinuousClock.now + timeout
        while true {
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero else { throw EchoBench.Failure("timed out waiting for '\(word)' from the peer") }
            let sink = self.sink
            // Cancelled once the line came: then it must not wake the next wait.
            let guardTask = Task {
                do { try await Task.sleep(for: remaining) } catch { return }
                sink.yield(.tick)
            }
            var lines = self.lines
            let next = await lines.next()
            self.lines = lines
            guardTask.cancel()
            switch next {
            case nil:
                throw EchoBench.Failure("the peer exited while '\(word)' was awaited")
            case .tick:
                continue
            case .line(let line):
                let words = line.split(separator: " ")
                guard words.first.map(String.init) == word else {
                    EchoBench.progress("bounds: peer said '\(line)'")
                    continue
                }
                var values: [String: Int] = [:]
                for pair in words.dropFirst() {
                    let parts = pair.split(separator: "=", maxSplits: 1)
                    if parts.count == 2, let value = Int(parts[1]) { values[String(parts[0])] = value }
                }
                return values
            }
        }
    }

    /// Sends a line to the child.
    func command(_ line: String) throws {
        var text = line + "\n"
        let descriptor = self.input.fileHandleForWriting.fileDescriptor
        let written = text.withUTF8 { bytes in write(descriptor, bytes.baseAddress, bytes.count) }
        guard written == text.utf8.count else { throw EchoBench.Failure("cannot write to the peer (errno \(errno))") }
    }

    /// Tells the child to reset its connection, and waits until it has.
    func leave() async throws {
        try self.command("leave")
        _ = try await self.expect("left")
    }

    /// Ends the child: it exits when its stdin ends; SIGTERM after 2 s, SIGKILL after 1 s more.
    func stop() async {
        try? self.input.fileHandleForWriting.close()
        let clock = ContinuousClock()
        var deadline = clock.now + .seconds(2)
        while self.process.isRunning, clock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
        if self.process.isRunning {
            EchoBench.progress("bounds: peer \(self.process.processIdentifier) still running, terminating it")
            self.process.terminate()
            deadline = clock.now + .seconds(1)
            while self.process.isRunning, clock.now < deadline {
                try? await Task.sleep(for: .milliseconds(10))
            }
            if self.process.isRunning { kill(self.process.processIdentifier, SIGKILL) }
        }
        self.process.waitUntilExit()
    }
}

// MARK: - Measuring

/// The RSS growth of this process from a baseline: the peak (VmHWM, reset at the baseline) and samples.
final class PeakMeter: Sendable {
    /// RSS when the meter was made, in KiB.
    let baselineKiB: Int
    /// VmHWM was reset to the RSS at the baseline, so it is the peak since then.
    let highWaterMarkReset: Bool
    private let sampledPeakKiB: Atomic<Int>
    private let sampling = Atomic<Bool>(true)

    init() {
        self.highWaterMarkReset = Self.resetHighWaterMark()
        let baseline = Self.residentKiB()
        self.baselineKiB = baseline
        self.sampledPeakKiB = Atomic(baseline)
        Thread.detachNewThread { [self] in
            while self.sampling.load(ordering: .relaxed) {
                self.sampledPeakKiB.max(Self.residentKiB(), ordering: .relaxed)
                usleep(5_000)
            }
        }
    }

    deinit {
        self.sampling.store(false, ordering: .relaxed)
    }

    /// RSS now, above the baseline.
    func growthKiB() -> Int {
        Self.residentKiB() - self.baselineKiB
    }

    /// The growth 300 ms after now, once what was released meanwhile is back.
    func settledGrowthKiB() async throws -> Int {
        try await Task.sleep(for: .milliseconds(300))
        return self.growthKiB()
    }

    /// Stops sampling and returns the peak growth: the higher of VmHWM's, when it was reset, and the samples' (the
    /// kernel's RSS counters are approximate, per CPU: either can be a few hundred KiB above the other).
    func finish() -> (growthKiB: Int, fromHighWaterMark: Bool, sampledGrowthKiB: Int) {
        self.sampling.store(false, ordering: .relaxed)
        let sampled = max(self.sampledPeakKiB.load(ordering: .relaxed), Self.residentKiB()) - self.baselineKiB
        guard self.highWaterMarkReset, let highWaterMark = Self.highWaterMarkKiB() else {
            return (sampled, false, sampled)
        }
        return (max(highWaterMark - self.baselineKiB, sampled), true, sampled)
    }

    /// Resident set size in KiB (`/proc/self/statm`, second field), read without allocating, so that the sampling
    /// thread does not disturb what it measures.
    static func residentKiB() -> Int {
        let descriptor = open("/proc/self/statm", O_RDONLY)
        guard descriptor >= 0 else { return 0 }
        defer { close(descriptor) }
        let pages = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 128) { buffer -> Int in
            let count = read(descriptor, buffer.baseAddress, buffer.count)
            guard count > 0 else { return 0 }
            var field = 0
            var value = 0
            for byte in buffer[..<count] {
                if byte == UInt8(ascii: " ") {
                    if field == 1 { break }
                    field += 1
                } else if field == 1, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
                    value = value * 10 + Int(byte - UInt8(ascii: "0"))
                }
            }
            return value
        }
        return pages * (Int(sysconf(Int32(_SC_PAGESIZE))) / 1024)
    }

    /// Sets VmHWM to the current RSS (Linux: 5 to /proc/PID/clear_refs); false where that is refused.
    static func resetHighWaterMark() -> Bool {
        let descriptor = open("/proc/self/clear_refs", O_WRONLY)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        return write(descriptor, "5", 1) == 1
    }

    /// VmHWM, the peak RSS, from /proc/self/status.
    static func highWaterMarkKiB() -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        // "VmHWM:\t  218524 kB"
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            return Int(line.dropFirst(6).filter { $0.isNumber })
        }
        return nil
    }
}
#endif
