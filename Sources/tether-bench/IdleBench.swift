// Idle-connection benchmark: `swift run -c release tether-bench idle [--connections N] [--seconds S]`.
//
// Opens N (default 1,000) `WebSocketClient`s with the default transport, each heartbeating every 1 s (timeout 5 s),
// to an embedded `TestServer` (`Scenario.normal`: pongs at once) on loopback, holds them for S (default 10) seconds
// and prints:
//   idle.connections        connections open at the end of the hold
//   idle.pongs              pongs seen by the clients during the hold: about N × S, a little less, as each ping goes
//                           one interval after the previous pong
//   idle.cpu_percent        process CPU time (user + system, getrusage) over wall time during the hold, in % of one
//                           core. It includes the embedded server's thread: client and server together.
//   idle.rss_kib_per_conn   (RSS after opening − RSS before) / N, from /proc/self/statm. Also includes the server's
//                           side of each connection (its socket, handler, records).
//   idle.rss_kib_per_conn_after_hold  the same after the hold (records and buffers that grew meanwhile)
#if os(Linux)
import Foundation
import Synchronization
import Tether
import TetherCore
import TetherTestServer

enum IdleBench {
    static func run(_ arguments: [String]) async {
        var connections = 1_000
        var seconds = 10
        var index = 0
        while index < arguments.count {
            let value = index + 1 < arguments.count ? Int(arguments[index + 1]) : nil
            switch (arguments[index], value) {
            case ("--connections", let count?) where count > 0: connections = count
            case ("--seconds", let count?) where count > 0: seconds = count
            default:
                EchoBench.progress("usage: tether-bench idle [--connections N] [--seconds S]")
                exit(2)
            }
            index += 2
        }
        do {
            try await self.measure(connections: connections, seconds: seconds)
        } catch {
            EchoBench.progress("tether-bench idle: \(error)")
            exit(1)
        }
    }

    /// What the clients' event readers saw, shared with the benchmark task.
    final class Tally: Sendable {
        let open = Atomic<Int>(0)
        let pongs = Atomic<Int>(0)
        let holding = Atomic<Bool>(false)
        let changes: AsyncStream<Void>.Continuation

        init(changes: AsyncStream<Void>.Continuation) {
            self.changes = changes
        }
    }

    static func measure(connections: Int, seconds: Int) async throws {
        // Client and server sockets are both in this process, plus the loops' descriptors.
        self.raiseDescriptorLimit(to: 2 * connections + 256)
        EchoBench.progress("idle: load average \(self.loadAverage())")
        let server = try TestServer(scenario: .normal)
        let url = URL(string: server.url(path: "/idle"))!
        let (changes, changesSink) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .unbounded)
        let tally = Tally(changes: changesSink)
        var changeIterator = changes.makeAsyncIterator()

        // One connection first, so that one-time costs (the shared loop's thread, the cooperative pool's threads,
        // runtime metadata) are not counted per connection.
        let warmUp = self.makeClient(url: url, tally: tally)
        await warmUp.start()
        try await self.waitUntil(&changeIterator, tally: tally, timeout: .seconds(10)) {
            tally.open.load(ordering: .relaxed) == 1
        }
        await warmUp.stop()
        try await self.waitUntil(&changeIterator, tally: tally, timeout: .seconds(10)) {
            tally.open.load(ordering: .relaxed) == 0
        }

        let rssBefore = self.residentKiB()
        let clock = ContinuousClock()
        let openingStart = clock.now
        var clients: [WebSocketClient<ContinuousClock>] = []
        clients.reserveCapacity(connections)
        for _ in 0..<connections {
            let client = self.makeClient(url: url, tally: tally)
            clients.append(client)
            await client.start()
        }
        try await self.waitUntil(&changeIterator, tally: tally, timeout: .seconds(60)) {
            tally.open.load(ordering: .relaxed) == connections
        }
        let rssOpen = self.residentKiB()
        EchoBench.progress(
            "idle: \(connections) connections open in \(clock.now - openingStart), "
                + "RSS \(rssBefore) → \(rssOpen) KiB")

        let threadsStart = self.threadCPUNanoseconds()
        let cpuStart = self.processCPUSeconds()
        let holdStart = clock.now
        tally.holding.store(true, ordering: .relaxed)
        try await Task.sleep(until: holdStart + .seconds(seconds), clock: clock)
        tally.holding.store(false, ordering: .relaxed)
        let cpuEnd = self.processCPUSeconds()
        let wall = EchoBench.seconds(holdStart.duration(to: clock.now))
        let rssEnd = self.residentKiB()
        self.reportThreads(from: threadsStart, to: self.threadCPUNanoseconds(), wall: wall)

        print("idle.connections \(tally.open.load(ordering: .relaxed))")
        print("idle.pongs \(tally.pongs.load(ordering: .relaxed))")
        print("idle.cpu_percent \(WireBench.format((cpuEnd - cpuStart) / wall * 100))")
        print("idle.rss_kib_per_conn \(WireBench.format(Double(rssOpen - rssBefore) / Double(connections)))")
        print("idle.rss_kib_per_conn_after_hold \(WireBench.format(Double(rssEnd - rssBefore) / Double(connections)))")

        await withTaskGroup(of: Void.self) { group in
            for client in clients { group.addTask { await client.stop() } }
        }
        await server.stop()
    }

    /// A client heartbeating every second whose events are read by a task of its own (as an app would), which
    /// keeps the tally of open connections and of pongs during the hold.
    static func makeClient(url: URL, tally: Tally) -> WebSocketClient<ContinuousClock> {
        let client = WebSocketClient(configuration: .init(
            url: url, heartbeatInterval: .seconds(1), heartbeatTimeout: .seconds(5)))
        let events = client.events
        Task {
            var isOpen = false
            for await event in events {
                switch event {
                case .stateChanged(let state, _):
                    guard (state.phase == .open) != isOpen else { continue }
                    isOpen.toggle()
                    tally.open.add(isOpen ? 1 : -1, ordering: .relaxed)
                    tally.changes.yield()
                case .roundTrip:
                    if tally.holding.load(ordering: .relaxed) { tally.pongs.add(1, ordering: .relaxed) }
                case .message, .record:
                    continue
                }
            }
        }
        return client
    }

    /// Waits for changes until `condition` holds.
    /// - Parameter timeout: a guard against a run that can never finish, not a delay.
    static func waitUntil(
        _ changes: inout AsyncStream<Void>.Iterator, tally: Tally, timeout: Duration, _ condition: () -> Bool
    ) async throws {
        let deadline = ContinuousClock.now + timeout
        while !condition() {
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero else { throw EchoBench.Failure("timed out waiting for connections") }
            // Any change (or the guard's wake-up) lets the condition be checked again.
            let guardTask = Task {
                try? await Task.sleep(for: remaining)
                tally.changes.yield()
            }
            _ = await changes.next()
            guardTask.cancel()
        }
    }

    // MARK: - Process measurements

    static func raiseDescriptorLimit(to wanted: Int) {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return }
        guard limit.rlim_cur < rlim_t(wanted) else { return }
        limit.rlim_cur = min(limit.rlim_max, rlim_t(wanted))
        if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) != 0 || limit.rlim_cur < rlim_t(wanted) {
            EchoBench.progress("idle: RLIMIT_NOFILE is \(limit.rlim_cur), below the \(wanted) descriptors needed")
        }
    }

    /// Resident set size in KiB (`/proc/self/statm`, second field, in pages).
    static func residentKiB() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * sysconf(Int32(_SC_PAGESIZE)) / 1024
    }

    /// User plus system CPU time of the whole process (every thread), in seconds.
    static func processCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(Int32(RUSAGE_SELF.rawValue), &usage)
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    /// CPU time per thread name (`/proc/self/task/*/comm` and `schedstat`), for the breakdown on stderr.
    static func threadCPUNanoseconds() -> [String: Int] {
        var byName: [String: Int] = [:]
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        for task in tasks {
            guard let comm = try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8),
                  let stat = try? String(contentsOfFile: "/proc/self/task/\(task)/schedstat", encoding: .utf8),
                  let nanoseconds = stat.split(separator: " ").first.flatMap({ Int($0) }) else { continue }
            byName[comm.trimmingCharacters(in: .whitespacesAndNewlines), default: 0] += nanoseconds
        }
        return byName
    }

    static func reportThreads(from start: [String: Int], to end: [String: Int], wall: Double) {
        let shares = end.map { name, nanoseconds in
            (name, Double(nanoseconds - (start[name] ?? 0)) / 1e9 / wall * 100)
        }
        let line = shares.filter { $0.1 >= 0.05 }.sorted { $0.1 > $1.1 }
            .map { "\($0.0) \(WireBench.format($0.1))%" }.joined(separator: ", ")
        EchoBench.progress("CPU by thread (% of one core): \(line)")
    }

    static func loadAverage() -> String {
        let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? "?"
        return text.split(separator: " ").prefix(3).joined(separator: " ")
    }
}
#endif
