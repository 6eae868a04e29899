#if os(Linux)
import Foundation
import Synchronization
import Testing
import TetherCore
import TetherPOSIX
import TetherTestServer
import TetherTesting
@testable import TetherCLI
import TetherTestSupport
#if canImport(Glibc)
import Glibc
#endif

@Suite struct ConnectCommandTests {
    @Test func countStopsAfterFiveMessagesAndEventsAreJSONLWithoutSecrets() async throws {
        let server = try TestServer(scenario: .send(count: 20, size: 12, everyMilliseconds: 2))
        let captured = CapturedIO()
        let status = await TetherCommand.run([
            "connect", server.url(path: "/feed?token=s3cret"), "--header", "Authorization: Bearer hunter2",
            "--count", "5", "--events", "jsonl", "--no-path-monitor",
        ], io: captured.io)
        await server.stop()
        #expect(status == 0, "\(captured.error)")
        let events = try captured.outputLines.map { line in
            try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
        let allowed: Set<String> = [
            "t", "gen", "event", "from", "to", "reason", "code", "rtt_ms", "attempt", "delay_ms", "bytes", "path",
            "timings",
        ]
        #expect(events.allSatisfy { Set($0.keys).isSubset(of: allowed) })
        #expect(events.map { $0["event"] as? String }.prefix(2) == ["connecting", "opened"])
        // The open carries its attempt's steps, the connect naming the numeric address only.
        let timings = try #require(events[1]["timings"] as? [String: Any])
        #expect(Set(timings.keys) == ["resolve", "tcp", "upgrade"])
        let connect = try #require((timings["tcp"] as? [[String: Any]])?.first)
        let port = try #require(URL(string: server.url())?.port)
        #expect(connect["address"] as? String == "127.0.0.1:\(port)" && connect["outcome"] as? String == "connected")
        #expect(connect["family"] as? String == "ipv4" && connect["duration_ms"] is Int)
        #expect((timings["upgrade"] as? [String: Any])?["start_ms"] is Int)
        #expect(events.filter { $0["timings"] != nil }.count == 1)
        let messages = events.filter { $0["event"] as? String == "message" }
        #expect(messages.count >= 5)
        #expect(messages.allSatisfy { $0["bytes"] as? Int == 12 && $0["gen"] as? Int == 1 })
        #expect(events.last?["event"] as? String == "stopped")
        let everything = captured.output + captured.error
        #expect(!everything.contains("s3cret") && !everything.contains("hunter2") && !everything.contains("token"))
        #expect(!captured.output.contains("0..........."))  // no payloads in jsonl mode
        // The server saw the header: it was sent, only never shown.
        #expect(server.connection(1)?.request?.header("Authorization") == "Bearer hunter2")
    }

    @Test func receivedMessagesArePrintedUnlessQuiet() async throws {
        let server = try TestServer(scenario: .send(count: 3, size: 4))
        let loud = CapturedIO()
        #expect(await TetherCommand.run(
            ["connect", server.url(), "--count", "3", "--no-path-monitor"], io: loud.io) == 0)
        #expect(loud.outputLines == ["0...", "1...", "2..."])
        #expect(loud.error.contains(" open gen=1 "))
        let quiet = CapturedIO()
        #expect(await TetherCommand.run(
            ["connect", server.url(), "--count", "3", "--quiet", "--no-path-monitor"], io: quiet.io) == 0)
        #expect(quiet.output.isEmpty)
        await server.stop()
    }

    @Test func theStatusLineShowsTheSubprotocolTheServerChose() async throws {
        let server = try TestServer(scenario: Scenario.send(count: 1, size: 4).selecting(subprotocol: "feed.v2"))
        let captured = CapturedIO()
        #expect(await TetherCommand.run([
            "connect", server.url(), "--protocol", "feed.v1", "--protocol", "feed.v2", "--count", "1",
            "--no-path-monitor",
        ], io: captured.io) == 0)
        #expect(captured.error.contains(" open gen=1 protocol=feed.v2 "), "\(captured.error)")
        await server.stop()
    }

    @Test func stdinLinesAreSentAndTheEchoPrinted() async throws {
        let server = try TestServer(scenario: Scenario.echo.recordingPayloads())
        let captured = CapturedIO()
        captured.type("hello")  // typed before the connection opened: it waits for the open
        captured.type("world")
        let status = await TetherCommand.run(
            ["connect", server.url(), "--count", "2", "--no-path-monitor"], io: captured.io)
        await server.stop()
        #expect(status == 0)
        #expect(captured.outputLines == ["hello", "world"])
        let received = server.connection(1)?.messages.compactMap { message in
            message.payload.map { String(decoding: $0, as: UTF8.self) }
        }
        #expect(received == ["hello", "world"])
    }

    @Test func queuedLinesFollowTheGreetingFileAndAreAllWrittenBeforeTheEnd() async throws {
        let server = try TestServer(scenario: Scenario.normal.recordingPayloads())
        let greeting = FileManager.default.temporaryDirectory.appendingPathComponent("greeting-\(UUID()).txt")
        try "auth token\nsubscribe news\n".write(to: greeting, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: greeting) }
        let captured = CapturedIO()
        captured.type("one")  // queued before any connection exists
        captured.type("two")
        captured.endInput()
        let status = await TetherCommand.run(
            ["connect", server.url(), "--queue", "--greeting-file", greeting.path, "--no-path-monitor"],
            io: captured.io)
        #expect(status == 0, "\(captured.error)")
        try await server.waitForConnection(1) { $0.messageCount >= 4 }
        await server.stop()
        let received = server.connection(1)?.messages.compactMap { message in
            message.payload.map { String(decoding: $0, as: UTF8.self) }
        }
        #expect(received == ["auth token", "subscribe news", "one", "two"])
        #expect(captured.error.contains("net=online"))
    }

    @Test func aMissingGreetingFileIsABadArgument() async {
        let captured = CapturedIO()
        let status = await TetherCommand.run(
            ["connect", "ws://127.0.0.1:1/", "--greeting-file", "/nonexistent/greeting", "--no-path-monitor"],
            io: captured.io)
        #expect(status == 2)
        #expect(captured.error.contains("cannot read the greeting file"))
    }

    @Test func endOfInputIsACleanExit() async throws {
        let server = try TestServer(scenario: .normal)
        let captured = CapturedIO()
        captured.endInput()
        #expect(await TetherCommand.run(["connect", server.url(), "--no-path-monitor"], io: captured.io) == 0)
        await server.stop()
    }

    /// `echo hi | tether connect URL`: at the end of its input the command closes, and prints what arrives until
    /// the closing handshake ends, which brings the replies to every line a server answers in order. Before, the
    /// command stopped printing at the end of input and the reply showed in some runs only.
    @Test func theEndOfPipedInputWaitsForTheRepliesBeforeTheClose() async throws {
        let server = try TestServer(scenario: .echo)
        for round in 0..<10 {
            let captured = CapturedIO()
            captured.type("hi \(round)")
            captured.type("there")
            captured.endInput()
            #expect(await TetherCommand.run(["connect", server.url(), "--no-path-monitor"], io: captured.io) == 0)
            #expect(captured.outputLines == ["hi \(round)", "there"], "round \(round): \(captured.error)")
        }
        await server.stop()
    }

    /// With `--count` the end of input does not end the command: the count does, once the replies are in.
    @Test func withACountTheEndOfInputWaitsForTheCount() async throws {
        let server = try TestServer(scenario: .echo)
        let captured = CapturedIO()
        captured.type("one")
        captured.type("two")
        captured.endInput()
        #expect(await TetherCommand.run(
            ["connect", server.url(), "--count", "2", "--no-path-monitor"], io: captured.io) == 0)
        #expect(captured.outputLines == ["one", "two"])
        await server.stop()
    }

    /// `--events-text` puts each message's text (or a binary message's base64) in its record; without it no record
    /// holds a payload (see `countStopsAfterFiveMessagesAndEventsAreJSONLWithoutSecrets`).
    @Test func eventsTextAddsTheMessageToItsRecord() async throws {
        let server = try TestServer(scenario: .echo)
        let captured = CapturedIO()
        captured.type("caf\u{E9} \"quoted\"")
        let status = await TetherCommand.run(
            ["connect", server.url(), "--events", "jsonl", "--events-text", "--count", "1", "--no-path-monitor"],
            io: captured.io)
        await server.stop()
        #expect(status == 0)
        let message = try #require(captured.outputLines.first { $0.contains(#""event":"message""#) })
        let object = try #require(JSONSerialization.jsonObject(with: Data(message.utf8)) as? [String: Any])
        #expect(object["text"] as? String == "caf\u{E9} \"quoted\"")
        #expect(object["bytes"] as? Int == 14)
        let binary = LogRecord(generation: 1, time: 0, from: .open, to: .open, event: .message(bytes: 3))
        #expect(ConnectCommand.jsonLine(binary, with: .binary(Data([1, 2, 3]))).hasSuffix(#","base64":"AQID"}"#))
    }

    /// Ctrl-C before any connection opened is a failure to connect (128 + SIGINT, as a shell reports it), said so;
    /// once a connection had opened it is the ordinary way to end (0).
    @Test func anInterruptionBeforeAnyConnectionExitsNonZero() async throws {
        let server = try TestServer(scenario: .silentHandshake)  // accepts, never answers the upgrade
        let captured = CapturedIO()
        var io = captured.io
        io.waitForInterrupt = {
            await captured.waitForError(containing: " connecting gen=1 ")
            return SIGINT
        }
        #expect(await TetherCommand.run(["connect", server.url(), "--no-path-monitor"], io: io) == 130)
        #expect(captured.error.contains("tether: interrupted before any connection opened\n"))
        let opened = CapturedIO()
        var openedIO = opened.io
        openedIO.waitForInterrupt = {
            await opened.waitForError(containing: " open gen=1 ")
            return SIGTERM
        }
        let echo = try TestServer(scenario: .echo)
        #expect(await TetherCommand.run(["connect", echo.url(), "--no-path-monitor"], io: openedIO) == 0)
        #expect(!opened.error.contains("interrupted"))
        await server.stop()
        await echo.stop()
    }

    @Test(
        .enabled(if: TinyProxy.executable != nil, Comment(rawValue: TinyProxy.missing)), .timeLimit(.minutes(1)))
    func proxyTunnelsThroughTinyproxyWithoutShowingItsCredentials() async throws {
        let proxy = try await TinyProxy(basicAuth: (user: "alice", password: "s3cret"))
        defer { proxy.stop() }
        let server = try TestServer(scenario: Scenario.echo.recordingPayloads())
        let serverPort = try #require(URL(string: server.url())?.port)

        // A wrong password: the proxy refuses (401, not retried), and the server never sees a connection.
        let refused = CapturedIO()
        refused.endInput()
        let refusedStatus = await TetherCommand.run([
            "connect", server.url(), "--proxy", proxy.url(user: "mallory", password: "hunter2"), "--events", "jsonl",
            "--no-path-monitor",
        ], io: refused.io)
        #expect(refusedStatus == 3, "\(refused.error)")
        #expect(refused.error.contains("stopped: proxy_rejected 401"))
        #expect(refused.output.contains(#""reason":"proxy_rejected","code":401"#))
        #expect(server.connections.isEmpty)

        // The right one: the line goes through the tunnel to the server and its echo comes back.
        let captured = CapturedIO()
        captured.type("via tinyproxy")
        let status = await TetherCommand.run([
            "connect", server.url(), "--proxy", proxy.url(user: "alice", password: "s3cret"), "--count", "1",
            "--no-path-monitor",
        ], io: captured.io)
        #expect(status == 0, "\(captured.error)")
        #expect(captured.outputLines == ["via tinyproxy"])
        #expect(captured.error.contains(" open gen=1 "))
        let received = server.connection(1)?.messages.compactMap { message in
            message.payload.map { String(decoding: $0, as: UTF8.self) }
        }
        #expect(received == ["via tinyproxy"])
        await server.stop()

        // The proxy's log has both tunnels to the server's port; no output of either run shows a credential.
        proxy.stop()
        let log = await proxy.exitedLog()
        let tunnels = log.components(separatedBy: "CONNECT 127.0.0.1:\(serverPort) HTTP/1.1").count - 1
        #expect(tunnels == 2, "\(log)")
        let everything = refused.output + refused.error + captured.output + captured.error
        for secret in ["s3cret", "alice", "hunter2", "mallory"] { #expect(!everything.contains(secret), "\(secret)") }
    }

    @Test func aHeaderTheHandshakeSetsItselfIsABadArgument() async throws {
        let captured = CapturedIO()
        captured.endInput()
        let status = await TetherCommand.run(
            ["connect", "ws://127.0.0.1:9/", "--header", "Sec-WebSocket-Key: SECRET", "--no-path-monitor"],
            io: captured.io)
        #expect(status == 2)
        #expect(captured.error.contains("WebSocketConfiguration.headers: Sec-WebSocket-Key"))
        #expect(!captured.error.contains("SECRET"))
    }

    /// A 401 or 403 is named as the refusal of the credentials it is, on the status line and in the last line, not
    /// as an unreachable server.
    @Test(arguments: [(401, "Unauthorized"), (403, "Forbidden")])
    func aRefusalOfTheCredentialsExitsThreeNamedAsWhatItIs(status: Int, phrase: String) async throws {
        let server = try TestServer(scenario: .reject(status: status))
        let captured = CapturedIO()
        let exit = await TetherCommand.run(
            ["connect", server.url(), "--events", "jsonl", "--no-path-monitor"], io: captured.io)
        await server.stop()
        #expect(exit == 3)
        #expect(captured.error.contains(
            "tether: stopped: handshake_rejected \(status) \(phrase): the server refused the credentials "
                + "(see --header) (not retryable)\n"))
        #expect(captured.error.contains(" failed gen=1 "))
        #expect(captured.error.contains(" net=auth_failure:\(status)]"))
        #expect(!captured.error.contains("server_unreachable"))
        let closed = captured.outputLines.first { $0.contains(#""event":"closed""#) }
        #expect(closed?.contains(#""reason":"handshake_rejected","code":\#(status)"#) == true)
    }

    @Test func aHandshakeThatDoesNotValidateSaysWhyOnStderrWithoutTheHeaderValue() async throws {
        let listener = try TCPListener.bind()
        listener.start { tcp in tcp.setHandler(BadAcceptServer()) }
        let captured = CapturedIO()
        // The command runs until the failed attempt has been reported: the report itself ends it (as Ctrl-C).
        let (errors, errorSink) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .unbounded)
        var io = captured.io
        let writeError = io.writeError
        io.writeError = { text in
            writeError(text)
            errorSink.yield(text)
        }
        io.waitForInterrupt = {
            for await text in errors where text.contains("attempt failed") { return SIGINT }
            return 0
        }
        let status = await TetherCommand.run([
            "connect", "ws://127.0.0.1:\(listener.port)/feed", "--events", "jsonl", "--backoff-base", "60000",
            "--no-path-monitor",
        ], io: io)
        errorSink.finish()
        await listener.close()
        #expect(status == 128 + SIGINT)  // interrupted before any connection opened
        // Then the steps the attempt reached: the upgrade, answered wrongly, never finished.
        #expect(captured.error.contains(
            "tether: attempt failed: handshake_invalid (Sec-WebSocket-Accept does not match the key) [resolve +"))
        #expect(captured.error.contains("ms connected], upgrade +"))
        #expect(captured.error.contains("ms unfinished]\n"))
        let closed = captured.outputLines.first { $0.contains(#""event":"closed""#) }
        #expect(closed?.contains(
            #""reason":"handshake_invalid","detail":"Sec-WebSocket-Accept does not match the key""#) == true)
        #expect(!(captured.output + captured.error).contains("SECRET"))
    }

    @Test func onlyAFailedAttemptThatWillBeRetriedGetsAnAttemptLine() {
        func closed(from: SessionPhase, to: SessionPhase, _ reason: CloseReason) -> LogRecord {
            LogRecord(generation: 1, time: 0, from: from, to: to, event: .closed(reason: reason, code: nil))
        }
        #expect(ConnectCommand.attemptFailure(closed(from: .connecting, to: .waiting, .connectFailed(.refused)))
            == "attempt failed: connect_failed (refused)\n")
        let tried = [
            ConnectAttempt(address: "[2001:db8::2]:80", failure: .unreachable),
            ConnectAttempt(address: "192.0.2.2:80", failure: .refused),
        ]
        let failedEverywhere = closed(from: .connecting, to: .waiting, .connectFailed(.refused, tried: tried))
        #expect(ConnectCommand.attemptFailure(failedEverywhere)
            == "attempt failed: connect_failed (refused; tried [2001:db8::2]:80: unreachable, 192.0.2.2:80: refused)\n")
        #expect(ConnectCommand.attemptFailure(closed(from: .connecting, to: .waiting, .socksRejected(.hostUnreachable)))
            == "attempt failed: proxy_rejected (SOCKS host unreachable)\n")
        #expect(closed(from: .connecting, to: .waiting, .socksRejected(.ttlExpired)).jsonLine.contains(
            #""reason":"proxy_rejected","detail":"SOCKS TTL expired""#))
        #expect(ConnectCommand.attemptFailure(closed(from: .connecting, to: .waiting, .handshakeRejected(status: 503)))
            == "attempt failed: handshake_rejected 503 Service Unavailable\n")
        #expect(ConnectCommand.attemptFailure(closed(from: .connecting, to: .offline, .connectTimeout))
            == "attempt failed: connect_timeout\n")
        // A failure that stops the session has its own "stopped:" line; stopping or leaving is no failure; an open
        // connection that ends is not a failed attempt.
        #expect(ConnectCommand.attemptFailure(closed(from: .connecting, to: .failed, .handshakeRejected(status: 401)))
            == nil)
        #expect(ConnectCommand.attemptFailure(closed(from: .connecting, to: .stopped, .userStopped)) == nil)
        #expect(ConnectCommand.attemptFailure(closed(from: .connecting, to: .suspended, .enteredBackground)) == nil)
        #expect(ConnectCommand.attemptFailure(closed(from: .open, to: .waiting, .pongTimeout)) == nil)
    }

    /// `--connect-timeout` is the session's connect deadline: a server that never answers the upgrade fails the
    /// attempt as `connect_timeout` after it (the default, 10 s, would outlast this test), and the next attempt
    /// follows the backoff.
    @Test func connectTimeoutEndsAnAttemptTheServerNeverAnswers() async throws {
        let server = try TestServer(scenario: .silentHandshake)
        let captured = CapturedIO()
        let (errors, errorSink) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .unbounded)
        var io = captured.io
        let writeError = io.writeError
        io.writeError = { text in
            writeError(text)
            errorSink.yield(text)
        }
        io.waitForInterrupt = {
            for await text in errors where text.contains("attempt failed") { return SIGINT }
            return 0
        }
        let started = ContinuousClock.now
        // Long enough for a slowed process (ThreadSanitizer) to have sent its upgrade before the deadline.
        let timeout = TestTime.scaled(milliseconds: 150)
        let status = await TetherCommand.run([
            "connect", server.url(), "--connect-timeout", "\(timeout)", "--backoff-base", "60000", "--events", "jsonl",
            "--no-path-monitor", "--no-stdin",
        ], io: io)
        errorSink.finish()
        await server.stop()
        #expect(status == 128 + SIGINT)  // interrupted before any connection opened
        // With the steps reached: the upgrade was still waiting for its answer at the deadline.
        #expect(captured.error.contains("tether: attempt failed: connect_timeout [resolve +"))
        #expect(captured.error.contains("ms unfinished]\n"))
        let connecting = captured.outputLines.first { $0.contains(#""event":"connecting""#) }
        let closed = captured.outputLines.first { $0.contains(#""event":"closed""#) }
        let times = [connecting, closed].compactMap { line in
            line.flatMap { $0.firstMatch(of: /"t":(\d+)/).flatMap { Int($0.1) } }
        }
        #expect(times.count == 2 && times[1] - times[0] >= timeout
            && times[1] - times[0] < TestTime.scaled(milliseconds: 5_000), "\(times)")
        #expect(ContinuousClock.now - started < TestTime.scaled(.seconds(9)))
    }

    @Test func durationEndsARunThatReceivesNothing() async throws {
        let server = try TestServer(scenario: .normal)
        let captured = CapturedIO()
        // Long enough for the connection to be accepted on a loaded machine (CI saw none within 50 ms), which is
        // what the count below asks: the run is ended by the duration, not by a failure to connect.
        let duration = TestTime.scaled(milliseconds: 500)
        #expect(await TetherCommand.run(
            ["connect", server.url(), "--duration", "\(duration)", "--no-path-monitor"], io: captured.io) == 0)
        await server.stop()
        #expect(server.connections.count == 1)
    }

    // MARK: Printing

    @Test func controlCharactersInReceivedTextArePrintedEscapedUnlessRaw() async throws {
        let server = try TestServer(scenario: .echo)
        // A title change, a screen clear, a tab and a C1 CSI, sent back by the server.
        let hostile = "\u{1B}]0;pwned\u{07}\u{1B}[2J\tok\u{9B}31m\u{7F}"
        let escaped = CapturedIO()
        escaped.type(hostile)
        #expect(await TetherCommand.run(
            ["connect", server.url(), "--count", "1", "--no-path-monitor"], io: escaped.io) == 0)
        #expect(escaped.outputLines == [#"\u{1B}]0;pwned\u{07}\u{1B}[2J\u{09}ok\u{9B}31m\u{7F}"#])
        #expect(!escaped.output.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x9B })
        let raw = CapturedIO()
        raw.type(hostile)
        #expect(await TetherCommand.run(
            ["connect", server.url(), "--count", "1", "--raw", "--no-path-monitor"], io: raw.io) == 0)
        #expect(raw.output == hostile + "\n")
        await server.stop()
    }

    // MARK: Exit status

    @Test func aRejectionExitsThreeEvenWhenStdinEndsAtTheSameMoment() async throws {
        let server = try TestServer(scenario: .reject(status: 401))
        for round in 0..<30 {
            let captured = CapturedIO()
            if round.isMultiple(of: 2) {
                captured.endInput()  // `< /dev/null`: stdin is at its end before the handshake starts
            } else {
                // Stdin ends as the server answers 401: both reach the command at about the same moment.
                let events = server.events()
                Task {
                    for await event in events {
                        guard case .rejected = event.kind else { continue }
                        captured.endInput()
                        return
                    }
                }
            }
            let status = await TetherCommand.run(["connect", server.url(), "--no-path-monitor"], io: captured.io)
            #expect(status == 3, "round \(round): \(captured.error)")
            #expect(captured.error.contains("stopped: handshake_rejected 401"), "round \(round)")
        }
        await server.stop()
    }

    @Test func noStdinKeepsRunningWithStdinClosedUntilTheCount() async throws {
        let server = try TestServer(scenario: .send(count: 3, size: 4, everyMilliseconds: 20))
        let captured = CapturedIO()
        captured.endInput()
        let status = await TetherCommand.run(
            ["connect", server.url(), "--no-stdin", "--count", "3", "--no-path-monitor"], io: captured.io)
        await server.stop()
        #expect(status == 0)
        #expect(captured.outputLines == ["0...", "1...", "2..."])
    }

    // MARK: Bounds

    @Test func stdinIsReadOnlyAsFastAsTheServerTakesTheLines() async throws {
        // The server never reads: once the kernel's buffers are full (a few MB), a send waits. Stdin offers
        // endless 256 KiB lines; the command may only have taken the lines it sent plus the one it is sending.
        let server = try UnreadServer(resetAfterMilliseconds: 300)
        let stdin = CountingInput(line: String(repeating: "x", count: 256 << 10), limit: 10_000)
        let captured = CapturedIO()
        var io = captured.io
        io.inputLines = { stdin.lines() }
        let status = await TetherCommand.run(
            ["connect", server.url, "--duration", "1500", "--no-path-monitor"], io: io)
        server.stop()
        #expect(status == 0)
        // At most the client's send buffer (4 MiB by default on Linux) plus the server's small receive window:
        // about 17 lines; unpaced reading would take all 10,000 in the same time.
        #expect(stdin.taken >= 1)  // a line was read (how many were sent before the reset depends on the kernel)
        #expect(stdin.taken <= 64, "\(stdin.taken) lines read ahead")
    }

    @Test func aLineReadWhileTheConnectionIsNotOpenWaitsAndNothingMoreIsRead() async throws {
        let server = try TestServer(scenario: .silentHandshake)
        let stdin = CountingInput(line: "hello", limit: 10_000)
        let captured = CapturedIO()
        var io = captured.io
        io.inputLines = { stdin.lines() }
        let status = await TetherCommand.run(
            ["connect", server.url(), "--duration", "200", "--no-path-monitor"], io: io)
        await server.stop()
        #expect(status == 0)
        #expect(stdin.taken == 1)
    }

    @Test func aSignalEndsTheCommandWhileStdoutIsBlocked() async throws {
        // A flood of messages, and a stdout that takes the first write and never returns from it.
        let server = try TestServer(scenario: .send(count: 200_000, size: 1))
        let blocked = BlockedIO()
        let status = await TetherCommand.run(
            ["connect", server.url(), "--no-stdin", "--no-path-monitor"], io: blocked.io)
        let returned = ContinuousClock.now
        blocked.release()
        await server.stop()
        #expect(status == 0)
        let interrupted = try #require(blocked.interruptedAt)
        // Returned although standard output never took more than its first write: see the same test of `serve` for
        // why the 1 s promise is measured on a real process (ConnectProcessTests) rather than here.
        #expect(returned - interrupted < TestTime.scaled(.seconds(3)), "\(returned - interrupted)")
    }
}

/// Standard input with an endless supply of the same line, counting how many lines the command took.
final class CountingInput: Sendable {
    private let count = Mutex(0)
    private let line: String
    private let limit: Int

    /// - Parameter limit: lines offered at most (then the input ends), so that a command that reads without
    ///   bound fails the test instead of exhausting memory.
    init(line: String, limit: Int) {
        self.line = line
        self.limit = limit
    }

    var taken: Int { self.count.withLock { $0 } }

    /// Produces a line only when the command asks for one, like a pipe read on demand.
    func lines() -> AsyncStream<String> {
        AsyncStream(unfolding: {
            let taken = self.count.withLock { count -> Bool in
                guard count < self.limit else { return false }
                count += 1
                return true
            }
            return taken ? self.line : nil
        })
    }
}

/// A raw server that answers the first bytes of a connection (the upgrade request) with a 101 whose
/// `Sec-WebSocket-Accept` cannot match the client's key, and whose value is a marker no output may show.
private final class BadAcceptServer: TCPConnectionHandler {
    private var answered = false

    func received(_ bytes: UnsafeRawBufferPointer, on connection: TCPConnection) {
        guard !self.answered else { return }
        self.answered = true
        connection.write(Array((
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Accept: SECRET-bm90LXRoZS1rZXk=\r\n\r\n"
        ).utf8))
    }

    func ended(_ end: TCPConnection.End, on connection: TCPConnection) {}
}
#endif
