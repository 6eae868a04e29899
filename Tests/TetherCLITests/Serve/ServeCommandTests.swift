#if os(Linux)
import Foundation
import Testing
import TetherTestServer
@testable import TetherCLI
import TetherTestSupport

@Suite struct ServeCommandTests {
    @Test func serveRejectsAsToldAndConnectExitsThree() async throws {
        let (served, url) = try await serving(serveOptions(["--reject", "401"])) { url in
            let client = CapturedIO()
            #expect(await TetherCommand.run(["connect", url, "--no-path-monitor"], io: client.io) == 3)
        }
        #expect(served.outputLines.first == "listening on \(url) (reject 401, echo)")
        #expect(served.outputLines.contains("conn 1 rejected 401"))
    }

    @Test func scenarioFollowsTheFlags() throws {
        guard case .serve(let options) = try CommandLineParser.parse([
            "serve", "--pong-delay", "20", "--close-after", "300", "--close-code", "4001", "--send", "3",
            "--every", "10", "--size", "8", "--echo", "--ping-every", "50", "--broadcast-every", "20",
        ]) else {
            Issue.record("expected serve")
            return
        }
        #expect(ServeCommand.scenario(for: options).description
            == "accept, pong delayed 20 ms, echo, send 3 text x 8 B every 10 ms, "
                + "broadcast a number every 20 ms x 16 B, ping every 50 ms, close 4001 after 300 ms")
    }

    /// `tether serve --delivery` and `tether connect --acknowledged --feed`: the test server's delivery protocol from
    /// the command line (docs/delivery.md).
    @Test func serveSpeaksTheDeliveryProtocolAndConnectUsesIt() async throws {
        let options = try serveOptions(["--feed", "prices", "--feed-every", "20", "--no-echo"])
        #expect(ServeCommand.scenario(for: options).description
            == "accept, delivery protocol: acknowledges sends, feeds prices every 20 ms, 1000 retained")
        let (served, _) = try await serving(options) { url in
            let client = CapturedIO()
            client.type("buy 10")  // typed before the open: it waits in the outbox
            client.type("sell 5")
            let status = await TetherCommand.run(
                ["connect", url, "--acknowledged", "--feed", "prices", "--count", "15", "--no-path-monitor"],
                io: client.io)
            #expect(status == 0, "\(client.error)")
            let numbers = client.outputLines.compactMap { line -> Int? in
                let fields = line.split(separator: " ")
                return fields.count == 3 && fields[0] == "feed" && fields[1] == "prices" ? Int(fields[2]) : nil
            }
            #expect(numbers.count == 15 && zip(numbers, numbers.dropFirst()).allSatisfy { $1 == $0 + 1 },
                    "\(client.outputLines)")
            #expect(client.error.components(separatedBy: "acknowledged ").count - 1 == 2, "\(client.error)")
        }
        #expect(served.outputLines.contains("conn 1 subscribe prices from now on"), "\(served.output)")
        #expect(served.outputLines.filter { $0.hasPrefix("conn 1 send ") }.count == 2)
    }

    /// `tether serve` with no flag answers what is typed at it, as websocat's and wscat's servers do, and says which
    /// port it picked and how to keep it.
    @Test func serveEchoesByDefaultAndSaysWhichPortItPicked() async throws {
        let (served, url) = try await serving(serveOptions([])) { url in
            let client = CapturedIO()
            client.type("hello")
            #expect(await TetherCommand.run(["connect", url, "--count", "1", "--no-path-monitor"], io: client.io) == 0)
            #expect(client.outputLines == ["hello"])
        }
        let port = try #require(URLComponents(string: url)?.port)
        #expect(served.outputLines.first == "listening on \(url) (accept, echo)")
        #expect(served.error.contains("listening on port \(port), a free one; --port \(port) keeps it\n"))
        #expect(try ServeCommand.scenario(for: serveOptions(["--no-echo"])).description == "accept")
        // A port asked for needs no hint.
        var options = ServeOptions()
        options.port = port
        let (again, _) = try await serving(options) { _ in }
        #expect(!again.error.contains("--port"))
    }

    /// A `connect` that lost its server retries the same port; a `serve` restarted with `--port` on that port is
    /// found by the next attempt (the listener reuses the address, whatever the old connections' TIME_WAIT).
    @Test func aConnectRetryingTheOldPortReachesAServeRestartedOnIt() async throws {
        let client = CapturedIO()
        var connecting: Task<Int32, Never>?
        let (_, url) = try await serving(serveOptions([])) { url in
            connecting = Task {
                await TetherCommand.run([
                    "connect", url, "--no-stdin", "--count", "1", "--backoff-base", "50", "--backoff-cap", "200",
                    "--no-path-monitor",
                ], io: client.io)
            }
            await client.waitForError(containing: " open gen=1 ")
        }  // the first serve stops here: the connection ends, and the client retries the same port
        await client.waitForError(containing: "attempt failed: connect_failed (refused")
        let port = try #require(URLComponents(string: url)?.port)
        let (served, _) = try await serving(serveOptions(["--port", "\(port)", "--send", "1", "--size", "4"])) { _ in
            #expect(await connecting?.value == 0)  // it received the restarted server's message
        }
        #expect(client.outputLines == ["0..."])
        #expect(client.error.contains(" open gen=") && served.outputLines.contains("conn 1 connected"))
    }

    @Test func aPortInUseFailsWithAMessage() async throws {
        try await serving(ServeOptions()) { url in
            var options = ServeOptions()
            options.port = try #require(URLComponents(string: url)?.port)
            let second = CapturedIO()
            #expect(await ServeCommand.run(options, io: second.io, until: {}) == 1)
            #expect(second.error.hasPrefix("tether serve: "))
        }
    }

    @Test func aSignalEndsServeWhileStdoutIsBlocked() async throws {
        let blocked = BlockedIO()  // its first write, "listening on ...", never returns; then SIGTERM comes
        let status = await ServeCommand.run(ServeOptions(), io: blocked.io)
        let returned = ContinuousClock.now
        blocked.release()
        #expect(status == 0)
        let interrupted = try #require(blocked.interruptedAt)
        // It returned although standard output never took a byte: the deadline after the signal, not the write, ended
        // it (without the deadline it would never return). In-process, beside the whole suite's parallel tests, the
        // wall time includes waits for the shared thread pool, so the 1 s promise itself is measured on a real
        // process (ConnectProcessTests) and this bound only catches a shutdown that waited for something else.
        #expect(returned - interrupted < TestTime.scaled(.seconds(3)), "\(returned - interrupted)")
    }

    @Test func eventsThatFindTheOutputFullAreCountedNotKept() async {
        let sink = OutputQueueTests.HeldSink()
        sink.hold()
        let output = OutputQueue(io: sink.io, limit: 16)
        let (events, feed) = AsyncStream.makeStream(of: ServerEvent.self)
        feed.yield(ServerEvent(connection: 1, at: 0, kind: .connected))  // 17 bytes: the queue is full
        for index in 1...4 {
            feed.yield(ServerEvent(connection: 1, at: index, kind: .message(.text, bytes: index)))
        }
        feed.finish()
        await ServeCommand.printEvents(events, to: output)
        sink.release()
        await output.finish()
        #expect(sink.written == "conn 1 connected\n(4 events not shown)\n")
    }
}
#endif
