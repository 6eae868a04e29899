// Idle-connection benchmark:
//   `swift run -c release tether-bench idle [--connections N] [--seconds S] [--server process|embedded]
//    [--url URL] [--consumer pool|loop] [--heartbeat-records on|off] [--layer client|transport]
//    [--references transport,c|transport|c|none] [--c-reference PATH]`.
//
// Opens N (default 10,000) `WebSocketClient`s with the default transport, each heartbeating every 1 s (timeout 5 s),
// to a `TestServer` on loopback that answers pings at once, holds them for S (default 10) seconds and prints:
//   idle.connections        connections open at the end of the hold
//   idle.pongs              pongs seen by the clients during the hold: about N × S, a little less, as each ping goes
//                           one interval after the previous pong
//   idle.pongs_total        round trips the clients saw in the whole run, opening and closing included: what
//                           scripts/bench-counts.sh divides a run's counts by (two run lengths, the difference)
//   idle.cpu_percent        this process's CPU time (user + system, getrusage) over wall time during the hold, in % of
//                           one core: what the clients cost, with their event-reading tasks
//   idle.server_cpu_percent the server's CPU time over the same hold (with `--server process`), for comparison
//   idle.wakeups_per_ping   turns of the clients' event loop during the hold (`EventLoop.wakeUps`: every return from
//                           epoll_wait, slept or not, so a loop that spins shows) per pong seen: a ping cycle needs at
//                           most two (the timer that sends the ping, the read of the pong), fewer when timers within
//                           one tolerance window and pongs that arrive together share one
//   idle.rss_kib_per_conn   (RSS after opening − RSS before) / N, from /proc/self/statm
//   idle.rss_kib_per_conn_after_hold  the same after the hold (records and buffers that grew meanwhile)
// and then, once the clients have stopped, the same-run references, each the same hold at the same N against the
// same server:
//   idle.transport_cpu_percent  N bare transport connections pinging from loop timers, events delivered on the loop,
//                           no client (IdleTransportReference.swift): what the sockets, the engine and the timers
//                           cost, so that idle.cpu_percent minus it is what the client layer adds
//   idle.c_reference_cpu_percent  the bare C client (scripts/peers/bare_c_client.c, `idle` mode, in a child process):
//                           one epoll loop, one write per ping, one read per pong, a 10 ms timer wheel, no library:
//                           the floor of the work on this machine at this moment
//   idle.vs_c_reference     idle.cpu_percent / idle.c_reference_cpu_percent (the target: at most 1.5 at
//                           10,000 connections with the default configuration)
//
// `--consumer pool` (the default) reads each client's events in a task on the global pool, as an app's task would;
// `--consumer loop` in a task that prefers the client's event loop (`client.eventExecutor`), where the events are
// made: no thread hand-off per wake-up. The difference is what handing events to an app's task costs.
//
// `--heartbeat-records off` makes the clients with `recordsHeartbeats = false` (no `.ping`/`.pong` log records on
// `events`, the `.roundTrip` event still per pong): what a program holding many connections can turn off.
//
// `--server process` (the default) runs the server in a child process (`tether-bench echo --serve-only 0`), so that
// the figures are the clients' alone, as they would be with a remote server. `--server embedded` runs it on its own
// event-loop thread in this process instead: then idle.cpu_percent and the RSS figures are client and server
// together. `--url ws://127.0.0.1:PORT/PATH` uses a server already running (scripts/bench-counts.sh starts one, so
// that `strace -f` counts the clients alone); it must answer pings at once.
//
// `--layer transport` holds only the bare transport connections (the reference above, printing
// idle.transport_cpu_percent and idle.transport_pongs_total), for counting them alone. `--references` chooses the
// references run after the clients (default `transport,c`; `none` for counting the clients alone). The C reference is
// compiled with `cc -O2` from scripts/peers/bare_c_client.c next to this source file into a temporary directory, or
// taken from `--c-reference PATH`; without a compiler or the source, it is skipped with a warning on stderr.
#if os(Linux)
import Foundation
import Synchronization
import Tether
import TetherCore
import TetherPOSIX
import TetherTestServer

enum IdleBench {
    /// What to measure, from the command line.
    struct Options {
        var connections = 10_000
        var seconds = 10
        var server = ServerChoice.process
        var clients = ClientSetup(onLoop: false, heartbeatRecords: true)
        /// Hold the clients (`--layer client`, the default); false: only the transport reference
        /// (`--layer transport`).
        var holdClients = true
        var transportReference = true
        var cReference = true
        /// `--c-reference PATH`: the bare C client, built already.
        var cReferencePath: String?

        enum ServerChoice {
            case process
            case embedded
            case external(URL)
        }

        init(_ arguments: [String]) throws(EchoBench.Failure) {
            var index = 0
            while index < arguments.count {
                let text = index + 1 < arguments.count ? arguments[index + 1] : nil
                let value = text.flatMap { Int($0) }
                switch (arguments[index], value, text) {
                case ("--connections", let count?, _) where count > 0: self.connections = count
                case ("--seconds", let count?, _) where count > 0: self.seconds = count
                case ("--server", _, "process"?): self.server = .process
                case ("--server", _, "embedded"?): self.server = .embedded
                case ("--url", _, let text?):
                    guard let url = URL(string: text), url.scheme == "ws" else {
                        throw EchoBench.Failure("--url needs a ws:// URL")
                    }
                    self.server = .external(url)
                case ("--consumer", _, "pool"?): self.clients.onLoop = false
                case ("--consumer", _, "loop"?): self.clients.onLoop = true
                case ("--heartbeat-records", _, "on"?): self.clients.heartbeatRecords = true
                case ("--heartbeat-records", _, "off"?): self.clients.heartbeatRecords = false
                case ("--layer", _, "client"?): self.holdClients = true
                case ("--layer", _, "transport"?): self.holdClients = false
                case ("--references", _, let list?):
                    let names = Set(list.split(separator: ","))
                    guard names == ["none"] || (!names.isEmpty && names.isSubset(of: ["transport", "c"])) else {
                        throw EchoBench.Failure("--references takes transport, c, transport,c or none")
                    }
                    self.transportReference = names.contains("transport")
                    self.cReference = names.contains("c")
                case ("--c-reference", _, let path?): self.cReferencePath = path
                default:
                    throw EchoBench.Failure(
                        "usage: tether-bench idle [--connections N] [--seconds S] [--server process|embedded] "
                            + "[--url URL] [--consumer pool|loop] [--heartbeat-records on|off] "
                            + "[--layer client|transport] [--references transport,c|transport|c|none] "
                            + "[--c-reference PATH]")
                }
                index += 2
            }
        }
    }

    static func run(_ arguments: [String]) async {
        let options: Options
        do {
            options = try Options(arguments)
        } catch {
            EchoBench.progress("tether-bench idle: \(error)")
            exit(2)
        }
        do {
            try await self.measure(options)
        } catch {
            EchoBench.progress("tether-bench idle: \(error)")
            exit(1)
        }
    }

    /// What the clients' event readers saw, shared with the benchmark task.
    final class Tally: Sendable {
        let open = Atomic<Int>(0)
        /// Pongs during the hold.
        let pongs = Atomic<Int>(0)
        /// Pongs since the connections opened.
        let pongsTotal = Atomic<Int>(0)
        let holding = Atomic<Bool>(false)
        let changes: AsyncStream<Void>.Continuation

        init(changes: AsyncStream<Void>.Continuation) {
            self.changes = changes
        }
    }

    /// How each client is made: where its event-reading task runs, and whether its heartbeats leave records.
    struct ClientSetup {
        var onLoop: Bool
        var heartbeatRecords: Bool
    }

    static func measure(_ options: Options) async throws {
        // Client and server sockets are both in this process (with the embedded server), plus the loops' descriptors;
        // the limit is inherited by the server's and the C reference's processes.
        self.raiseDescriptorLimit(to: 2 * options.connections + 256)
        EchoBench.progress("idle: load average \(self.loadAverage())")
        // The connections are opened at once: none may be dropped in the handshake.
        let server: IdleServer
        switch options.server {
        case .process:
            server = .process(try ServerProcess())
        case .embedded:
            server = .embedded(
                try TestServer(configuration: .init(maximumHandshakingConnections: 1 << 16), scenario: .normal))
        case .external(let url):
            server = .external(url)
        }
        do {
            try await self.measure(options, server: server)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    static func measure(_ options: Options, server: IdleServer) async throws {
        let (connections, seconds) = (options.connections, options.seconds)
        var clientCPUPercent: Double?
        if options.holdClients {
            clientCPUPercent = try await self.holdClients(
                connections: connections, seconds: seconds, server: server, setup: options.clients)
        }
        // The same-run references: the same hold, same server, same number of connections.
        if options.transportReference || !options.holdClients {
            let reference = try await IdleTransportReference.measure(
                url: server.url, connections: connections, seconds: seconds)
            EchoBench.progress("idle: transport reference, \(reference.pongs) pongs")
            print("idle.transport_cpu_percent \(WireBench.format(reference.cpuPercent))")
            if !options.holdClients { print("idle.transport_pongs_total \(reference.pongsTotal)") }
        }
        if options.cReference, options.holdClients {
            guard let reference = try await IdleCReference.measure(
                url: server.url, connections: connections, seconds: seconds, binary: options.cReferencePath)
            else { return }
            print("idle.c_reference_cpu_percent \(WireBench.format(reference))")
            if let clientCPUPercent, reference > 0 {
                print("idle.vs_c_reference \(WireBench.format(clientCPUPercent / reference))")
            }
        }
    }

    /// Opens the clients, holds them for `seconds` and prints the clients' figures; returns `idle.cpu_percent`.
    static func holdClients(connections: Int, seconds: Int, server: IdleServer, setup: ClientSetup) async throws
        -> Double {
        let url = server.url
        let (changes, changesSink) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .unbounded)
        let tally = Tally(changes: changesSink)
        var changeIterator = changes.makeAsyncIterator()

        // One connection first, so that one-time costs (the shared loop's thread, the cooperative pool's threads,
        // runtime metadata) are not counted per connection.
        let warmUp = try self.makeClient(url: url, tally: tally, setup: setup)
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
        var clients: [WebSocketClient] = []
        clients.reserveCapacity(connections)
        for _ in 0..<connections {
            let client = try self.makeClient(url: url, tally: tally, setup: setup)
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
        let serverCPUStart = server.cpuSeconds
        let cpuStart = self.processCPUSeconds()
        let wakeUpsStart = EventLoop.shared.wakeUps
        let holdStart = clock.now
        tally.holding.store(true, ordering: .relaxed)
        try await Task.sleep(until: holdStart + .seconds(seconds), clock: clock)
        tally.holding.store(false, ordering: .relaxed)
        let wakeUpsEnd = EventLoop.shared.wakeUps
        let cpuEnd = self.processCPUSeconds()
        let serverCPUEnd = server.cpuSeconds
        let wall = EchoBench.seconds(holdStart.duration(to: clock.now))
        let rssEnd = self.residentKiB()
        self.reportThreads(from: threadsStart, to: self.threadCPUNanoseconds(), wall: wall)

        let cpuPercent = (cpuEnd - cpuStart) / wall * 100
        print("idle.connections \(tally.open.load(ordering: .relaxed))")
        print("idle.pongs \(tally.pongs.load(ordering: .relaxed))")
        print("idle.cpu_percent \(WireBench.format(cpuPercent))")
        if let serverCPUStart, let serverCPUEnd {
            print("idle.server_cpu_percent \(WireBench.format((serverCPUEnd - serverCPUStart) / wall * 100))")
        }
        let pongs = tally.pongs.load(ordering: .relaxed)
        print("idle.wakeups_per_ping \(WireBench.format(Double(wakeUpsEnd - wakeUpsStart) / Double(max(pongs, 1))))")
        print("idle.rss_kib_per_conn \(WireBench.format(Double(rssOpen - rssBefore) / Double(connections)))")
        print("idle.rss_kib_per_conn_after_hold \(WireBench.format(Double(rssEnd - rssBefore) / Double(connections)))")

        await withTaskGroup(of: Void.self) { group in
            for client in clients { group.addTask { await client.stop() } }
        }
        clients.removeAll()
        try await self.waitUntil(&changeIterator, tally: tally, timeout: .seconds(30)) {
            tally.open.load(ordering: .relaxed) == 0
        }
        // Stopped clients deliver no more round trips: the total is the run's.
        print("idle.pongs_total \(tally.pongsTotal.load(ordering: .relaxed))")
        return cpuPercent
    }

    /// A client heartbeating every second whose events are read by a task of its own (as an app would), which
    /// keeps the tally of open connections and of pongs during the hold; `setup.onLoop`: the task prefers the client's
    /// event loop.
    static func makeClient(url: URL, tally: Tally, setup: ClientSetup) throws -> WebSocketClient {
        var configuration = WebSocketClient.Configuration(
            url: url, heartbeatInterval: .seconds(1), heartbeatTimeout: .seconds(5))
        configuration.recordsHeartbeats = setup.heartbeatRecords
        let client = try WebSocketClient(configuration: configuration)
        let events = client.events
        Task(executorPreference: setup.onLoop ? client.eventExecutor : nil) {
            var isOpen = false
            for await event in events {
                switch event {
                case .stateChanged(let state, _):
                    guard (state.phase == .open) != isOpen else { continue }
                    isOpen.toggle()
                    tally.open.add(isOpen ? 1 : -1, ordering: .relaxed)
                    tally.changes.yield()
                case .roundTrip:
                    tally.pongsTotal.add(1, ordering: .relaxed)
                    if tally.holding.load(ordering: .relaxed) { tally.pongs.add(1, ordering: .relaxed) }
                case .message, .record, .outboxDropped, .unconfirmed, .delivery:
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
            // Any change (or the guard's wake-up) lets the condition be checked again. A guard cancelled because a
            // change came first must not yield: its yield would wake the next wait at once, and so on, a loop of new
            // tasks and Dispatch timers (each kept until its deadline) while the condition is false.
            let guardTask = Task {
                do { try await Task.sleep(for: remaining) } catch { return }
                tally.changes.yield()
            }
            _ = await changes.next()
            guardTask.cancel()
        }
    }

    /// Where the clients connect: a `TestServer` in this process, one in a child process, or one already running.
    enum IdleServer {
        case embedded(TestServer)
        case process(ServerProcess)
        case external(URL)

        var url: URL {
            switch self {
            case .embedded(let server): URL(string: server.url(path: "/idle"))!
            case .process(let child): child.url
            case .external(let url): url
            }
        }

        /// The child's CPU time so far; nil for the embedded server (its thread counts in this process) and for one
        /// already running.
        var cpuSeconds: Double? {
            switch self {
            case .embedded, .external: nil
            case .process(let child): child.cpuSeconds()
            }
        }

        func stop() async {
            switch self {
            case .embedded(let server): await server.stop()
            case .process(let child): child.stop()
            case .external: break
            }
        }
    }

    /// `tether-bench echo --serve-only 0` as a child process: the embedded echo server, which answers pings at
    /// once, alone in its process.
    final class ServerProcess: Sendable {
        let url: URL
        private let process: Process

        /// - Parameter deflate: the server accepts permessage-deflate offers.
        init(deflate: Bool = false) throws {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
            process.arguments = ["echo", "--serve-only", "0", "--stop-on-stdin-eof"] + (deflate ? ["--deflate"] : [])
            let output = Pipe()
            process.standardOutput = output
            // The child stops when this pipe closes, which happens when this process exits, however it exits.
            process.standardInput = Pipe()
            try process.run()
            // The child prints `echo.serve_url ws://127.0.0.1:PORT/echo` once it listens.
            var line: [UInt8] = []
            let reader = output.fileHandleForReading
            while line.last != UInt8(ascii: "\n") {
                let chunk = reader.readData(ofLength: 1)
                guard !chunk.isEmpty else { break }
                line.append(contentsOf: chunk)
            }
            let fields = String(decoding: line, as: UTF8.self).split(separator: " ")
            guard fields.count == 2, fields[0] == "echo.serve_url",
                  let url = URL(string: fields[1].trimmingCharacters(in: .whitespacesAndNewlines)) else {
                process.terminate()
                throw EchoBench.Failure("the server process did not report its URL")
            }
            self.process = process
            self.url = url
            EchoBench.progress("idle: server process \(process.processIdentifier) at \(url)")
        }

        /// User plus system CPU time of the child, in seconds (`/proc/PID/stat`, fields 14 and 15).
        func cpuSeconds() -> Double? {
            let path = "/proc/\(self.process.processIdentifier)/stat"
            guard let text = try? String(contentsOfFile: path, encoding: .utf8),
                  let end = text.lastIndex(of: ")") else { return nil }
            // Fields after the command name (which may hold spaces) start with field 3, the state.
            let fields = text[text.index(after: end)...].split(separator: " ")
            guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
            return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
        }

        func stop() {
            self.process.terminate()
            self.process.waitUntilExit()
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
