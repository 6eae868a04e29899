#if os(Linux)
import Foundation
import Testing
import TetherTestServer
@testable import TetherCLI

@Suite struct ServeCommandTests {
    @Test func serveRejectsAsToldAndConnectExitsThree() async throws {
        let (served, url) = try await serving(serveOptions(["--reject", "401"])) { url in
            let client = CapturedIO()
            #expect(await TetherCommand.run(["connect", url, "--no-path-monitor"], io: client.io) == 3)
        }
        #expect(served.outputLines.first == "listening on \(url) (reject 401)")
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
        #expect(returned - interrupted < .seconds(3), "\(returned - interrupted)")
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
