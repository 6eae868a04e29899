// Echo benchmarks over loopback: `swift run -c release tether-bench echo [options]`.
//
//   echo.rtt_64b_per_s            sequential 64-byte binary round trips per second through `WebSocketClient`
//                                 (send, await the echo on `client.events`, repeat)
//   echo.rtt_64b_text_per_s       the same with 64-byte text messages (UTF-8 validated on both sides)
//   echo.mbps_1m                  1 MiB binary messages echoed one at a time; payload MB/s (10^6 bytes) one way
//   echo.rtt_64b_loop_consumer_per_s  the 64-byte binary loop run by a task that prefers `client.eventExecutor`
//                                 (the event loop), as a latency-sensitive app would: each echo reaches it on the
//                                 thread that read it, with no hop to the global pool (how Python's asyncio clients
//                                 run, with the application on the I/O thread)
//   echo.loop_consumer_work_per_rt  pieces of work the event loop ran per round trip in that loop (`EventLoop.workRun`:
//                                 jobs of tasks and actors, queued closures): 1 is the consumer's resumption with
//                                 the echo; before the loop's task executor was an object of its own, it was 18
//   echo.tcp_rtt_70b_per_s        the same-run ceiling: 70-byte round trips over a bare TCP connection between two
//                                 event loops, no WebSocket and no tasks (TCPEchoReference.swift); embedded only
//   echo.tcp_pool_rtt_70b_per_s   the same with each echo handed to a task on the global pool that writes the next
//                                 payload: the reference for a consumer on the pool (one more thread hop per round
//                                 trip, nothing else); embedded only
//   echo.transport_rtt_64b_per_s  the 64-byte binary loop on a bare `SocketTransport` connection, without the
//   echo.transport_mbps_1m        actor and its event stream (what the actor costs), and the 1 MiB loop likewise
//
// With --tls, the same run adds (embedded server only), each next to its plain counterpart:
//   echo.tls_rtt_64b_per_s        echo.rtt_64b_per_s over wss:// (the embedded server with a certificate from a
//   echo.tls_mbps_1m              throw-away CA the client trusts), and echo.mbps_1m likewise
//   echo.tls_memory_mbps_1m       its same-run reference: the 1 MiB echo's four TLS passes (encrypt and decrypt each
//                                 way) through two TLSSessions in memory on one thread (TLSMemoryReference.swift)
//   echo.connects_per_s           sequential connections (TCP connect and upgrade, then close) per second on a bare
//   echo.tls_connects_per_s       `SocketTransport`, plain and with a full TLS handshake each
//                                 (`TLSOptions.sessionResumption` off)
//   echo.tls_resumed_connects_per_s  the same with session resumption (the default): each connection resumes the
//                                 session (a TLS 1.3 ticket) the previous one received, as a reconnect does; its
//                                 same-run reference is echo.tls_connects_per_s
//
// Options:
//   --url ws://HOST:PORT/PATH   measure against an external echo server instead of the embedded `TestServer`
//                               (`wss://` too: the system's trust store, plus --ca-file)
//   --ca-file FILE              with a `wss://` --url: also trust the CA certificates in FILE (PEM), as
//                               `tether connect --ca-file` does, for a server with a certificate of its own CA
//   --tls                       also measure over TLS (see above)
//   --seconds S                 measuring time per figure (default 2.5), after a warm-up
//   --round-trips N             the 64-byte binary loops (rtt_64b_per_s, rtt_64b_loop_consumer_per_s,
//                               transport_rtt_64b_per_s, tls_rtt_64b_per_s) run exactly N round trips with no warm-up
//                               instead of a timed run: what scripts/bench-counts.sh counts system calls and instructions over (two
//                               lengths, the difference divided by the difference in round trips)
//   --large-messages N          the 1 MiB loops (mbps_1m, transport_mbps_1m, tls_mbps_1m) echo exactly N messages with
//                               no warm-up instead of a timed run (scripts/bench-counts.sh counts them as it counts round
//                               trips)
//   --layer client|transport    measure only through the client, or only the bare transport (default: both)
//   --only NAME[,NAME...]       measure only these figures (names as printed, with or without `echo.`), for
//                               profiling one of them alone
//   --deflate                   with --serve-only: accept permessage-deflate offers (tether-bench deflate's memory
//                               figures)
//   --stop-on-stdin-eof         with --serve-only: also stop when standard input ends (a parent process's pipe
//                               closes when it exits, so the server never outlives it)
//   --serve-only PORT           only run the embedded echo server on 127.0.0.1:PORT (0: any) until SIGINT/SIGTERM,
//                               for other clients (scripts/bench-python-echo.sh)
//
// The embedded server (`Scenario.echo`, recording counts but no per-message records) runs on its own event-loop
// thread in this process; the client uses the default transport on the shared loop. Both share the machine's
// cores with the benchmark task, so the figures are for client and server together.
#if os(Linux)
import Foundation
import Tether
import TetherCore
import TetherPOSIX
import TetherTestServer

enum EchoBench {
    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    static func run(_ arguments: [String]) async {
        var options = Options()
        do {
            options = try Options(arguments)
        } catch {
            FileHandle.standardError.write(Data("tether-bench echo: \(error)\n".utf8))
            exit(2)
        }
        if let port = options.serveOnlyPort {
            await self.serve(
                port: port, stopOnStandardInputEnd: options.stopOnStandardInputEnd, deflate: options.serveDeflate)
            return
        }
        do {
            try await self.measure(options)
        } catch {
            FileHandle.standardError.write(Data("tether-bench echo: \(error)\n".utf8))
            exit(1)
        }
    }

    struct Options {
        var url: URL?
        var seconds = 2.5
        /// `--round-trips`: the 64-byte binary loops' exact length, instead of `seconds` after a warm-up.
        var roundTrips: Int?
        /// `--large-messages`: the 1 MiB loops' exact length, likewise.
        var largeMessages: Int?
        var serveOnlyPort: Int?
        var stopOnStandardInputEnd = false
        /// With --serve-only: the server accepts permessage-deflate offers (`Scenario.echo.deflating()`).
        var serveDeflate = false
        var client = true
        var transport = true
        var tls = false
        /// With `--url wss://…`: PEM CA certificates trusted besides the system's.
        var caFile: String?
        /// Figure names without the `echo.` prefix; nil: all of them.
        var only: Set<String>?

        func wants(_ figure: String) -> Bool {
            self.only?.contains(figure) ?? true
        }

        init() {}

        init(_ arguments: [String]) throws(Failure) {
            var index = 0
            func value() throws(Failure) -> String {
                guard index + 1 < arguments.count else { throw Failure("\(arguments[index]) needs a value") }
                index += 1
                return arguments[index]
            }
            while index < arguments.count {
                switch arguments[index] {
                case "--url":
                    let text = try value()
                    guard let url = URL(string: text), url.scheme == "ws" || url.scheme == "wss" else {
                        throw Failure("--url needs a ws:// or wss:// URL")
                    }
                    self.url = url
                case "--ca-file":
                    let path = try value()
                    guard FileManager.default.isReadableFile(atPath: path) else {
                        throw Failure("--ca-file: cannot read \(path)")
                    }
                    self.caFile = path
                case "--seconds":
                    guard let seconds = Double(try value()), seconds > 0 else { throw Failure("bad --seconds") }
                    self.seconds = seconds
                case "--round-trips":
                    guard let count = Int(try value()), count > 0 else { throw Failure("bad --round-trips") }
                    self.roundTrips = count
                case "--large-messages":
                    guard let count = Int(try value()), count > 0 else { throw Failure("bad --large-messages") }
                    self.largeMessages = count
                case "--tls":
                    self.tls = true
                case "--stop-on-stdin-eof":
                    self.stopOnStandardInputEnd = true
                case "--deflate":
                    self.serveDeflate = true
                case "--serve-only":
                    guard let port = Int(try value()), (0...65535).contains(port) else {
                        throw Failure("bad --serve-only port")
                    }
                    self.serveOnlyPort = port
                case "--layer":
                    switch try value() {
                    case "client": self.transport = false
                    case "transport": self.client = false
                    default: throw Failure("--layer is client or transport")
                    }
                case "--only":
                    let names = try value().split(separator: ",").map { name in
                        name.hasPrefix("echo.") ? String(name.dropFirst(5)) : String(name)
                    }
                    guard !names.isEmpty, names.allSatisfy(EchoBench.figures.contains) else {
                        let known = EchoBench.figures.sorted().joined(separator: ", ")
                        throw Failure("--only takes figure names: \(known)")
                    }
                    self.only = Set(names)
                case let other:
                    throw Failure("unknown option \(other)")
                }
                index += 1
            }
            if self.caFile != nil, self.url?.scheme != "wss" {
                throw Failure("--ca-file needs a wss:// --url")
            }
        }
    }

    static let figures: Set<String> = [
        "rtt_64b_per_s", "rtt_64b_text_per_s", "mbps_1m", "rtt_64b_loop_consumer_per_s", "transport_rtt_64b_per_s",
        "transport_mbps_1m", "tcp_rtt_70b_per_s", "tcp_pool_rtt_70b_per_s", "tls_rtt_64b_per_s", "tls_mbps_1m",
        "connects_per_s", "tls_connects_per_s", "tls_resumed_connects_per_s",
    ]

    /// The figures only `--tls` measures.
    static let tlsFigures: Set<String> = [
        "tls_rtt_64b_per_s", "tls_mbps_1m", "connects_per_s", "tls_connects_per_s", "tls_resumed_connects_per_s",
    ]

    // MARK: - Measuring

    static func measure(_ options: Options) async throws {
        var server: TestServer?
        let url: URL
        // The external server's CA, if given; the embedded server is plain (`--tls` adds its own TLS server).
        let tls = TLSOptions(additionalTrustRoots: options.caFile.map { [.pemFile($0)] } ?? [])
        if let external = options.url {
            url = external
            self.progress("echo: external server \(external.redactedForLogs)")
        } else {
            // Counts only: a per-message record would make the server's cost grow with the run.
            let embedded = try TestServer(configuration: .init(recordLimit: 0), scenario: .echo)
            server = embedded
            url = URL(string: embedded.url(path: "/echo"))!
            self.progress("echo: embedded TestServer at \(embedded.url(path: "/echo"))")
        }
        let small = WebSocketMessage.binary(Data((0..<64).map { UInt8(truncatingIfNeeded: $0 &* 7) }))
        let smallText = WebSocketMessage.text(String(repeating: "tether-64", count: 8).prefix(64).description)
        let large = WebSocketMessage.binary(Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }))
        precondition(small.byteCount == 64 && smallText.byteCount == 64)

        let clientFigures = ["rtt_64b_per_s", "rtt_64b_text_per_s", "mbps_1m", "rtt_64b_loop_consumer_per_s"]
        if options.client, clientFigures.contains(where: options.wants) {
            // The public client with its default transport.
            var client = try await ClientEndpoint.open(url: url, tls: tls)
            if options.wants("rtt_64b_per_s") {
                let rtt = try await self.roundTrips(
                    &client, small, seconds: options.seconds, count: options.roundTrips)
                print("echo.rtt_64b_per_s \(WireBench.format(rtt))")
            }
            if options.wants("rtt_64b_text_per_s") {
                let rttText = try await self.roundTrips(&client, smallText, seconds: options.seconds)
                print("echo.rtt_64b_text_per_s \(WireBench.format(rttText))")
            }
            if options.wants("mbps_1m") {
                let mbps = try await self.throughput(
                    &client, large, seconds: options.seconds, count: options.largeMessages)
                print("echo.mbps_1m \(WireBench.format(mbps))")
            }
            if options.wants("rtt_64b_loop_consumer_per_s") {
                let executor = client.client.eventExecutor
                let (rttOnLoop, loopWork) = try await withTaskExecutorPreference(executor) {
                    try await self.roundTripsCountingLoopWork(
                        &client, small, seconds: options.seconds, count: options.roundTrips)
                }
                print("echo.rtt_64b_loop_consumer_per_s \(WireBench.format(rttOnLoop))")
                print("echo.loop_consumer_work_per_rt \(WireBench.format(loopWork))")
            }
            await client.close()
        }
        if options.transport, options.wants("transport_rtt_64b_per_s") || options.wants("transport_mbps_1m") {
            // The same loops one layer down: the transport connection the client would own, without the actor.
            var bare = try await TransportEndpoint.open(url: url, tls: tls)
            if options.wants("transport_rtt_64b_per_s") {
                let transportRTT = try await self.roundTrips(
                    &bare, small, seconds: options.seconds, count: options.roundTrips)
                print("echo.transport_rtt_64b_per_s \(WireBench.format(transportRTT))")
            }
            if options.wants("transport_mbps_1m") {
                let transportMBps = try await self.throughput(
                    &bare, large, seconds: options.seconds, count: options.largeMessages)
                print("echo.transport_mbps_1m \(WireBench.format(transportMBps))")
            }
            bare.close()
        }

        let tlsAsked = options.tls || !(options.only ?? []).isDisjoint(with: Self.tlsFigures)
        if tlsAsked, options.url == nil {
            try await self.measureTLS(options, small: small, large: large)
        }

        await server?.stop()
        if options.url == nil, options.wants("tcp_rtt_70b_per_s") {
            let reference = try await TCPEchoReference.measure(seconds: options.seconds)
            print("echo.tcp_rtt_70b_per_s \(WireBench.format(reference))")
        }
        if options.url == nil, options.wants("tcp_pool_rtt_70b_per_s") {
            let reference = try await TCPEchoReference.measurePoolHop(seconds: options.seconds)
            print("echo.tcp_pool_rtt_70b_per_s \(WireBench.format(reference))")
        }
    }

    /// The `--tls` figures, each printed next to its plain counterpart measured just before it.
    static func measureTLS(_ options: Options, small: WebSocketMessage, large: WebSocketMessage) async throws {
        let authority = TestCertificateAuthority(commonName: "tether-bench CA")
        let certificate = authority.issue(hosts: ["127.0.0.1"])
        let trusting = TLSOptions(additionalTrustRoots: [.pem(Data(authority.certificate.certificatePEM))])
        let server = try TestServer(
            configuration: .init(recordLimit: 0, tls: TestServerTLS(certificate.serverOptions)), scenario: .echo)
        let url = URL(string: server.url(path: "/echo"))!
        self.progress("echo: embedded TestServer over TLS at \(server.url(path: "/echo"))")
        if options.client, options.wants("tls_rtt_64b_per_s") || options.wants("tls_mbps_1m") {
            var client = try await ClientEndpoint.open(url: url, tls: trusting)
            if options.wants("tls_rtt_64b_per_s") {
                let rtt = try await self.roundTrips(
                    &client, small, seconds: options.seconds, count: options.roundTrips)
                print("echo.tls_rtt_64b_per_s \(WireBench.format(rtt))")
            }
            if options.wants("tls_mbps_1m") {
                let mbps = try await self.throughput(
                    &client, large, seconds: options.seconds, count: options.largeMessages)
                print("echo.tls_mbps_1m \(WireBench.format(mbps))")
                let reference = try TLSMemoryReference.measure(
                    seconds: options.seconds, server: certificate.serverOptions,
                    client: TLSClientOptions(insecureSkipVerification: true))
                print("echo.tls_memory_mbps_1m \(WireBench.format(reference))")
            }
            await client.close()
        }
        let plainServer = try TestServer(configuration: .init(recordLimit: 0), scenario: .echo)
        if options.wants("connects_per_s") {
            let rate = try await self.connects(
                TransportRequest(url: URL(string: plainServer.url(path: "/echo"))!), seconds: options.seconds)
            print("echo.connects_per_s \(WireBench.format(rate))")
        }
        if options.wants("tls_connects_per_s") {
            var fullHandshakes = trusting
            fullHandshakes.sessionResumption = false
            let rate = try await self.connects(
                TransportRequest(url: url, tls: fullHandshakes), seconds: options.seconds)
            try self.checkResumed(server, expected: false)
            print("echo.tls_connects_per_s \(WireBench.format(rate))")
        }
        if options.wants("tls_resumed_connects_per_s") {
            let rate = try await self.connects(TransportRequest(url: url, tls: trusting), seconds: options.seconds)
            try self.checkResumed(server, expected: true)
            print("echo.tls_resumed_connects_per_s \(WireBench.format(rate))")
        }
        await plainServer.stop()
        await server.stop()
    }

    /// Checks that the server's latest connection resumed a TLS session, or did not, as the figure claims.
    static func checkResumed(_ server: TestServer, expected: Bool) throws {
        let resumed = server.connections.last?.tlsResumed
        guard resumed == expected else {
            throw Failure("the last TLS connection \(expected ? "did not resume" : "resumed") a session")
        }
    }

    /// Sequential connections: open (TCP, TLS when asked, upgrade), close, wait for the end; per second.
    static func connects(_ request: TransportRequest, seconds: Double) async throws -> Double {
        let clock = ContinuousClock()
        // One transport, as one client reconnecting uses: it keeps the TLS context, and so the session, between
        // connections.
        let transport = SocketTransport()
        func once() async throws {
            let connection = transport.connect(request)
            var events = connection.events.makeAsyncIterator()
            while let event = await events.next() {
                switch event {
                case .opened:
                    connection.close(code: 1000, reason: "")
                case .ended(.closedLocally):
                    return
                case .ended(let end):
                    throw Failure("connection ended: \(end)")
                case .message, .pong, .pingFailed, .redirected:
                    continue
                }
            }
        }
        let warmUpEnd = clock.now + .milliseconds(300)
        while clock.now < warmUpEnd { try await once() }
        let start = clock.now
        let end = start + .seconds(seconds)
        var count = 0
        var now = start
        repeat {
            try await once()
            count += 1
            now = clock.now
        } while now < end
        let elapsed = self.seconds(start.duration(to: now))
        self.progress("echo: \(count) connections in \(WireBench.format(elapsed)) s")
        return Double(count) / elapsed
    }

    /// Sequential round trips of `message`: a warm-up of 2,000 (or 1 s), then as many as fit in `seconds`; or, with
    /// `count`, exactly that many and no warm-up. Returns round trips per second.
    nonisolated(nonsending) static func roundTrips(
        _ endpoint: inout some EchoEndpoint, _ message: WebSocketMessage, seconds: Double, count: Int? = nil
    ) async throws -> Double {
        try await self.roundTripsCountingLoopWork(&endpoint, message, seconds: seconds, count: count).perSecond
    }

    /// `roundTrips`, with the work the shared loop ran per round trip (jobs of tasks and actors, queued closures).
    nonisolated(nonsending) static func roundTripsCountingLoopWork(
        _ endpoint: inout some EchoEndpoint, _ message: WebSocketMessage, seconds: Double, count exact: Int? = nil
    ) async throws -> (perSecond: Double, loopWorkPerRoundTrip: Double) {
        let (count, elapsed, loopWork) = try await self.repeatRoundTrips(
            &endpoint, message, warmUp: 2_000, seconds: seconds, count: exact)
        self.progress("echo: \(count) round trips of \(message.byteCount) B in \(WireBench.format(elapsed)) s")
        return (Double(count) / elapsed, Double(loopWork) / Double(count))
    }

    /// Sequential round trips of a large message; returns payload MB/s (10^6 bytes) in one direction.
    /// - Parameter exact: echo exactly this many messages, with no warm-up (`--large-messages`).
    nonisolated(nonsending) static func throughput(
        _ endpoint: inout some EchoEndpoint, _ message: WebSocketMessage, seconds: Double, count exact: Int? = nil
    ) async throws -> Double {
        let (count, elapsed, _) = try await self.repeatRoundTrips(
            &endpoint, message, warmUp: 20, seconds: seconds, count: exact)
        self.progress("echo: \(count) round trips of \(message.byteCount) B in \(WireBench.format(elapsed)) s")
        return Double(count * message.byteCount) / elapsed / 1e6
    }

    /// `warmUp` round trips (at most 1 s of them), then as many as fit in `seconds`; or, with `count`, exactly `count`
    /// round trips and no warm-up (a count that does not depend on the machine's speed, for counting).
    nonisolated(nonsending) static func repeatRoundTrips(
        _ endpoint: inout some EchoEndpoint, _ message: WebSocketMessage, warmUp: Int, seconds: Double,
        count exact: Int? = nil
    ) async throws -> (count: Int, seconds: Double, loopWork: Int) {
        let clock = ContinuousClock()
        let warmUpEnd = clock.now + .seconds(1)
        for _ in 0..<(exact == nil ? warmUp : 0) {
            try await self.roundTrip(&endpoint, message)
            if clock.now >= warmUpEnd { break }
        }
        let threadsStart = IdleBench.threadCPUNanoseconds()
        let cpuStart = IdleBench.processCPUSeconds()
        let workStart = EventLoop.shared.workRun
        let start = clock.now
        let end = start + .seconds(seconds)
        var count = 0
        var now = start
        repeat {
            try await self.roundTrip(&endpoint, message)
            count += 1
            now = clock.now
        } while exact.map { count < $0 } ?? (now < end)
        let elapsed = self.seconds(start.duration(to: now))
        let loopWork = EventLoop.shared.workRun - workStart
        let cpu = IdleBench.processCPUSeconds() - cpuStart
        self.progress("echo: process CPU \(WireBench.format(cpu / Double(count) * 1e6)) µs per round trip")
        IdleBench.reportThreads(from: threadsStart, to: IdleBench.threadCPUNanoseconds(), wall: elapsed)
        return (count, elapsed, loopWork)
    }

    /// One round trip; checks that what came back is the same size and kind as what was sent.
    nonisolated(nonsending) static func roundTrip(
        _ endpoint: inout some EchoEndpoint, _ message: WebSocketMessage
    ) async throws {
        try await endpoint.send(message)
        let echoed = try await endpoint.receive()
        switch (message, echoed) {
        case (.text(let sent), .text(let received)) where sent.utf8.count == received.utf8.count: return
        case (.binary(let sent), .binary(let received)) where sent.count == received.count: return
        default: throw Failure("the server answered \(echoed.byteCount) B, not an echo of \(message.byteCount) B")
        }
    }

    // MARK: - Serving

    /// Runs the embedded echo server until SIGINT or SIGTERM.
    static func serve(port: Int, stopOnStandardInputEnd: Bool = false, deflate: Bool = false) async {
        let server: TestServer
        do {
            // `tether-bench idle` opens its thousand connections at once: none may be dropped in the handshake.
            server = try TestServer(
                configuration: .init(port: port, recordLimit: 0, maximumHandshakingConnections: 1 << 16),
                scenario: deflate ? Scenario.echo.deflating() : .echo)
        } catch {
            FileHandle.standardError.write(Data("tether-bench echo: \(error)\n".utf8))
            exit(1)
        }
        // The URL goes to stdout, alone, so that a script can read the chosen port.
        print("echo.serve_url \(server.url(path: "/echo"))")
        fflush(nil)  // every output stream: the script is waiting for this line
        let (signals, sink) = AsyncStream.makeStream(of: Int32.self)
        var sources: [DispatchSourceSignal] = []
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { sink.yield(number) }
            source.resume()
            sources.append(source)
        }
        if stopOnStandardInputEnd {
            // A thread of its own blocks on standard input until it ends.
            Thread.detachNewThread {
                var byte: UInt8 = 0
                while read(STDIN_FILENO, &byte, 1) > 0 {}
                sink.yield(0)
            }
        }
        for await number in signals {
            self.progress("echo: signal \(number), stopping")
            break
        }
        sources.forEach { $0.cancel() }
        let served = server.connections
        let messages = served.reduce(0) { $0 + $1.messageCount }
        self.progress("echo: served \(served.count) connections, \(messages) messages")
        await server.stop()
    }

    // MARK: - Helpers

    static func progress(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}

/// One end of an echo exchange, driven by one task.
/// What the loops drive. Its methods and the loops run on their caller's executor (`nonisolated(nonsending)`), as the
/// body of an app's own loop does: a helper of the benchmark's that hopped would cost each round trip task switches
/// that are the benchmark's, not the client's.
protocol EchoEndpoint {
    nonisolated(nonsending) mutating func send(_ message: WebSocketMessage) async throws
    /// The next data message from the server.
    nonisolated(nonsending) mutating func receive() async throws -> WebSocketMessage
}

/// The public client: `send` on the actor, messages from `client.events`.
struct ClientEndpoint: EchoEndpoint {
    let client: WebSocketClient
    var events: WebSocketEvents.Iterator

    static func open(
        url: URL, tls: TLSOptions = TLSOptions(), compression: CompressionOptions? = nil
    ) async throws -> ClientEndpoint {
        // The default heartbeat (15 s) sends at most a ping or two during a run; they are part of the cost.
        var configuration = WebSocketClient.Configuration(url: url)
        configuration.tls = tls
        configuration.compression = compression
        let client = try WebSocketClient(configuration: configuration)
        var events = client.events.makeAsyncIterator()
        await client.start()
        while let event = await events.next() {
            guard case .stateChanged(let state, let cause) = event else { continue }
            switch state.phase {
            case .open:
                return ClientEndpoint(client: client, events: events)
            case .waiting, .failed, .stopped, .offline, .suspended:
                await client.stop()
                throw EchoBench.Failure("cannot connect: \(state.phase) \(cause.map { $0.name } ?? "")")
            case .connecting:
                continue
            }
        }
        throw EchoBench.Failure("the client's events ended")
    }

    nonisolated(nonsending) func send(_ message: WebSocketMessage) async throws {
        try await self.client.send(message)
    }

    nonisolated(nonsending) mutating func receive() async throws -> WebSocketMessage {
        while let event = await self.events.next(isolation: #isolation) {
            switch event {
            case .message(let message, _):
                return message
            case .stateChanged(let state, let cause) where state.phase != .open:
                throw EchoBench.Failure("connection left open: \(state.phase) \(cause.map { $0.name } ?? "")")
            case .stateChanged, .roundTrip, .record, .outboxDropped, .unconfirmed, .delivery:
                continue
            }
        }
        throw EchoBench.Failure("the client's events ended")
    }

    func close() async {
        await self.client.stop()
    }
}

/// A bare transport connection, as the client would own it, without the actor.
struct TransportEndpoint: EchoEndpoint {
    let connection: any TransportConnection
    var events: AsyncStream<TransportEvent>.Iterator

    static func open(url: URL, tls: TLSOptions = TLSOptions()) async throws -> TransportEndpoint {
        let connection = SocketTransport().connect(TransportRequest(url: url, tls: tls))
        var events = connection.events.makeAsyncIterator()
        while let event = await events.next() {
            switch event {
            case .opened:
                return TransportEndpoint(connection: connection, events: events)
            case .ended(let end):
                throw EchoBench.Failure("cannot connect: \(end)")
            case .message, .pong, .pingFailed, .redirected:
                continue
            }
        }
        throw EchoBench.Failure("the connection's events ended")
    }

    nonisolated(nonsending) func send(_ message: WebSocketMessage) async throws {
        try await self.connection.send(message)
    }

    nonisolated(nonsending) mutating func receive() async throws -> WebSocketMessage {
        while let event = await self.events.next(isolation: #isolation) {
            switch event {
            case .message(let message): return message
            case .ended(let end): throw EchoBench.Failure("connection ended: \(end)")
            case .opened, .pong, .pingFailed, .redirected: continue
            }
        }
        throw EchoBench.Failure("the connection's events ended")
    }

    func close() {
        self.connection.close(code: 1000, reason: "")
    }
}
#endif
