import Foundation
#if os(Linux)
import TetherPOSIX
import TetherTestServer
import TetherWire
#endif

/// `tether serve`: the controllable test server in the foreground. Prints its URL, then one line per
/// connection event, until SIGINT or SIGTERM, which end it within a second even when nobody reads its output.
package enum ServeCommand {
    /// - Parameters:
    ///   - until: returns when the server should stop; nil (default) waits for `io.waitForInterrupt`
    ///     (SIGINT or SIGTERM on the standard streams).
    ///   - started: called with the server's URL once it listens (tests use it to connect).
    /// - Returns: 0 after a clean stop, 1 when the server cannot listen.
    package static func run(
        _ options: ServeOptions,
        io: CommandIO,
        started: @escaping @Sendable (String) -> Void = { _ in },
        until: (@Sendable () async -> Void)? = nil
    ) async -> Int32 {
        let scenario = self.scenario(for: options)
        let server: TestServer
        var tls: TestServerTLS?
        if let certificate = options.tlsCertificate, let key = options.tlsKey {
            tls = TestServerTLS(
                certificateChain: .file(certificate), privateKey: .file(key),
                clientCertificateAuthorities: options.clientCertificateAuthorities.map { .file($0) })
        }
        do {
            try scenario.validate()
            let configuration = TestServer.Configuration(
                host: options.host, port: options.port, recordLimit: options.recordLimit,
                handshakeTimeout: .milliseconds(options.handshakeTimeout),
                maximumHandshakingConnections: options.maxHandshaking, tls: tls)
            server = try TestServer(configuration: configuration, scenario: scenario)
        } catch {
            io.writeError("tether serve: \(error)\n")
            return 1
        }
        let output = OutputQueue(io: io)
        let interruption = Interruption()
        let events = server.events()
        let printer = Task { await Self.printEvents(events, to: output) }
        var listening: [OutputQueue.Chunk] = [
            .init(stream: .output, text: "listening on \(server.url()) (\(scenario.description))\n"),
        ]
        if options.port == 0 {
            // A free port, another one on every start: a client retrying this one reaches the next run only if the
            // next run is told to listen here.
            let hint = "tether serve: listening on port \(server.port), a free one; --port \(server.port) keeps it\n"
            listening.append(.init(stream: .error, text: hint))
        }
        output.append(listening)
        started(server.url())
        if let until {
            await until()
        } else if let waitForInterrupt = io.waitForInterrupt {
            let signal = await waitForInterrupt()
            interruption.interrupt()
            output.append([.init(stream: .error, text: "tether serve: signal \(signal), stopping\n")])
        }
        let shutdown = Task {
            await server.stop()
            await printer.value  // the event stream finishes when the server stops
            if server.droppedEventCount > 0 {
                let text = "tether serve: \(server.droppedEventCount) events not printed (output fell behind)\n"
                output.append([.init(stream: .error, text: text)])
            }
            await output.finish()
        }
        if !(await interruption.wait(for: shutdown)) {
            // The deadline after a signal: standard output does not take what is queued. Exit anyway.
            printer.cancel()
            output.abandon()
        }
        return 0
    }

    #if os(Linux)
    /// Prints one line per server event. A line that finds the output queue full is not queued but counted, and
    /// the count is printed once there is room again: the server's events cannot wait (they do not slow the
    /// server), so a standard output that is slower than they come loses lines instead of growing memory.
    static func printEvents(_ events: AsyncStream<ServerEvent>, to output: OutputQueue) async {
        var dropped = 0
        for await event in events {
            if Task.isCancelled { return }
            if dropped > 0 {
                guard output.offer("(\(dropped) events not shown: output too slow)\n") else {
                    dropped += 1
                    continue
                }
                dropped = 0
            }
            // A request path comes from the client: its control characters are escaped like connect's messages.
            if !output.offer(TerminalText.escaped(event.description) + "\n") { dropped += 1 }
        }
        if dropped > 0 { output.append([.init(stream: .output, text: "(\(dropped) events not shown)\n")]) }
    }

    /// The scenario the flags describe.
    static func scenario(for options: ServeOptions) -> Scenario {
        var scenario = Scenario()
        if let status = options.reject {
            scenario.handshake = .reject(status: status, retryAfterSeconds: options.retryAfter)
        }
        if options.noPong {
            scenario.pong = .never
        } else if let delay = options.pongDelay {
            scenario.pong = .delayed(milliseconds: delay)
        }
        if let after = options.closeAfter {
            scenario.close = Scenario.Close(
                afterMilliseconds: after, code: options.closeCode ?? 1000, reason: options.closeReason)
        }
        if let count = options.send {
            scenario.stream = Scenario.Stream(count: count, size: options.size, intervalMilliseconds: options.every)
        }
        scenario.echo = options.echo
        if options.deflate { scenario.deflate = .accept(PerMessageDeflateServerPolicy()) }
        scenario.pingIntervalMilliseconds = options.pingEvery
        scenario.broadcast = options.broadcastEvery.map { Scenario.Broadcast(intervalMilliseconds: $0) }
        if options.delivery {
            scenario.delivery = Scenario.DeliveryProtocol(
                streams: options.feeds.isEmpty ? ["feed"] : options.feeds, intervalMilliseconds: options.feedEvery,
                retained: options.feedRetained)
        }
        return scenario
    }
    #endif
}

