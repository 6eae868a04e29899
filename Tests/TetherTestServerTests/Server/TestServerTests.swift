#if os(Linux)
import Foundation
import Testing
@testable import TetherPOSIX
@testable import TetherTestServer
import TetherTestSupport
@testable import TetherWire

@Suite(.timeLimit(.minutes(1)))
struct TestServerTests {
    // MARK: Pongs

    @Test func normalScenarioAnswersAPingWithItsPayloadAtOnce() async throws {
        let server = try TestServer(scenario: .normal)
        var (client, response) = try await RawClient.open(server)
        #expect(response.subprotocol == nil)

        try await client.ping(Array("abc".utf8))
        #expect(await client.nextMessage() == .pong(Array("abc".utf8)))

        let record = try await server.waitForConnection(1) { $0.pongsSent.count == 1 }
        #expect(record.pingsReceived.map(\.payload) == [Array("abc".utf8)])
        #expect(record.pongsSent.map(\.payload) == [Array("abc".utf8)])
        #expect(record.handshake == .accepted(subprotocol: nil))
        await server.stop()
    }

    @Test func delayedPongArrivesAfterTheDelayWithinTolerance() async throws {
        let server = try TestServer(scenario: .pongDelay(milliseconds: 120))
        var (client, _) = try await RawClient.open(server)

        let sent = ContinuousClock.now
        try await client.ping([1, 2])
        #expect(await client.nextMessage() == .pong([1, 2]))
        // Never early; how exactly on time is TestServerTimingTests' (a manual clock), not a wall-clock bound's.
        #expect(milliseconds(since: sent) >= 120)

        let record = try await server.waitForConnection(1) { $0.pongsSent.count == 1 }
        let delay = record.pongsSent[0].at - record.pingsReceived[0].at
        #expect(delay >= 119)
        await server.stop()
    }

    @Test func noPongRecordsPingsButNeverAnswers() async throws {
        let server = try TestServer(scenario: Scenario.noPong.echoing())
        var (client, _) = try await RawClient.open(server)

        try await client.ping([7])
        try await client.send(text: "after the ping")
        // The echo is sent after the ping was handled: had a pong been sent, it would come first.
        #expect(await client.nextMessage() == .text("after the ping"))
        try await client.close(code: 1000)
        let (messages, _) = await client.readToEnd()
        #expect(messages == [.close(code: 1000, reason: "")])

        let record = try await server.waitForEnd(ofConnection: 1)
        #expect(record.pingsReceived.map(\.payload) == [[7]])
        #expect(record.pongsSent.isEmpty)
        await server.stop()
    }

    @Test func echoWithDelayedPongsEchoesAtOnceAndPongsLater() async throws {
        let server = try TestServer(scenario: Scenario.echo.delayingPongs(byMilliseconds: 60))
        var (client, _) = try await RawClient.open(server)

        // One write, so that the text cannot arrive after the pong's delay.
        try await client.send { encoder, bytes in
            try encoder.ping([9], into: &bytes)
            encoder.text("now", into: &bytes)
        }
        #expect(await client.nextMessage() == .text("now"))
        #expect(await client.nextMessage() == .pong([9]))
        await server.stop()
    }

    // MARK: Closing and resetting

    @Test func closeAfterDelaySendsCodeAndReasonAndClosesTCPAfterTheReply() async throws {
        var scenario = Scenario.close(afterMilliseconds: 50, code: 4001, reason: "bye")
        scenario.closeTimeoutMilliseconds = 10_000  // the reply is what is tested, not the timeout (loaded machines)
        let server = try TestServer(scenario: scenario)
        let opened = ContinuousClock.now
        var (client, _) = try await RawClient.open(server)

        #expect(await client.nextMessage() == .close(code: 4001, reason: "bye"))
        #expect(milliseconds(since: opened) >= 50)
        try await client.close(code: 4001)
        let (messages, end) = await client.readToEnd()
        #expect(messages.isEmpty)
        #expect(end == .endOfStream)

        let record = try await server.waitForEnd(ofConnection: 1)
        #expect(record.closeSent?.code == 4001 && record.closeSent?.reason == "bye")
        #expect(record.closeReceived?.code == 4001)
        #expect(record.end?.reason == .closeHandshakeCompleted(initiatedByServer: true))
        #expect(record.closeSent!.at - record.openedAt! >= 49)
        await server.stop()
    }

    @Test func closeWithoutAReplyResetsAfterTheCloseTimeout() async throws {
        var scenario = Scenario.close(afterMilliseconds: 10, code: 1001)
        scenario.closeTimeoutMilliseconds = 40
        let server = try TestServer(scenario: scenario)
        var (client, _) = try await RawClient.open(server)

        let (messages, end) = await client.readToEnd()
        #expect(messages == [.close(code: 1001, reason: "")])
        #expect(end == .failed(.reset))
        let record = try await server.waitForEnd(ofConnection: 1)
        #expect(record.end?.reason == .closeTimedOut)
        #expect(record.end!.at - record.closeSent!.at >= 39)
        await server.stop()
    }

    @Test func clientCloseIsAnsweredWithTheSameCodeThenTCPCloses() async throws {
        let server = try TestServer(scenario: .normal)
        var (client, _) = try await RawClient.open(server)

        try await client.close(code: 1000, reason: "done")
        let (messages, end) = await client.readToEnd()
        #expect(messages == [.close(code: 1000, reason: "")])
        #expect(end == .endOfStream)
        let record = try await server.waitForEnd(ofConnection: 1)
        #expect(record.closeReceived?.code == 1000 && record.closeReceived?.reason == "done")
        #expect(record.end?.reason == .closeHandshakeCompleted(initiatedByServer: false))
        await server.stop()
    }

    @Test func emptyClientCloseIsAnsweredWithAnEmptyClose() async throws {
        let server = try TestServer(scenario: .normal)
        var (client, _) = try await RawClient.open(server)

        try await client.close(code: nil)
        #expect(await client.readToEnd().messages == [.close(code: nil, reason: "")])
        let record = try await server.waitForEnd(ofConnection: 1)
        #expect(record.closeReceived?.code == nil && record.closeSent?.code == nil)
        await server.stop()
    }

    @Test func afterItsCloseTheServerRecordsButNeitherEchoesNorPongs() async throws {
        // On a manual clock that the test never advances, the close (due at once) goes out but the close timeout
        // never runs out: on real time, a client slowed down by load for more than that second was reset before
        // its reply, and its send failed (`socket is closed`).
        var configuration = TestServer.Configuration()
        configuration.clock = .manual(ManualLoopClock())
        let server = try TestServer(
            configuration: configuration, scenario: Scenario.echo.closing(afterMilliseconds: 0, code: 1001))
        var (client, _) = try await RawClient.open(server)

        #expect(await client.nextMessage() == .close(code: 1001, reason: ""))
        try await client.send { encoder, bytes in
            encoder.text("late", into: &bytes)
            try encoder.ping([5], into: &bytes)
            try encoder.close(code: 1001, reason: "", into: &bytes)
        }
        #expect(await client.readToEnd().messages.isEmpty)
        let record = try await server.waitForEnd(ofConnection: 1)
        #expect(record.messages.map(\.size) == [4] && record.sentMessageCount == 0)
        #expect(record.pingsReceived.count == 1 && record.pongsSent.isEmpty)
        #expect(record.end?.reason == .closeHandshakeCompleted(initiatedByServer: true))
        await server.stop()
    }

    @Test func resetAfterDelayResetsTheTCPConnection() async throws {
        let server = try TestServer(scenario: .reset(afterMilliseconds: 30))
        var (client, _) = try await RawClient.open(server)

        let (messages, end) = await client.readToEnd()
        #expect(messages.isEmpty)
        #expect(end == .failed(.reset))
        let record = try await server.waitForEnd(ofConnection: 1)
        #expect(record.end?.reason == .serverReset)
        #expect(record.end!.at - record.openedAt! >= 28)
        await server.stop()
    }

    @Test func unmaskedClientFrameIsAProtocolErrorClosedWith1002() async throws {
        let server = try TestServer(scenario: .echo)
        var (client, _) = try await RawClient.open(server)

        var frame: [UInt8] = []
        var serverEncoder = WebSocketEncoder(role: .server)
        serverEncoder.encodeFrame(.text, fin: true, payload: Array("hi".utf8), into: &frame)
        try await client.connection.send(frame)
        let (messages, _) = await client.readToEnd()
        #expect(messages == [.close(code: 1002, reason: "unmasked frame from client")])
        let record = try await server.waitForEnd(ofConnection: 1)
        #expect(record.end?.reason == .protocolError(code: 1002))
        #expect(record.messageCount == 0)
        await server.stop()
    }

    @Test func invalidUTF8TextClosesWith1007AfterEarlierMessagesWereHandled() async throws {
        let server = try TestServer(scenario: .echo)
        var (client, _) = try await RawClient.open(server)

        try await client.send { encoder, bytes in
            encoder.text("fine", into: &bytes)
            encoder.encode(.text, payload: [0xC3, 0x28], into: &bytes)
        }
        let (messages, _) = await client.readToEnd()
        #expect(messages == [.text("fine"), .close(code: 1007, reason: "invalid UTF-8 in text message")])
        let record = try await server.waitForEnd(ofConnection: 1)
        #expect(record.end?.reason == .protocolError(code: 1007))
        #expect(record.closeSent?.code == 1007)
        await server.stop()
    }

    @Test func messageOverTheLimitClosesWith1009() async throws {
        let server = try TestServer(configuration: .init(maximumMessageSize: 1000), scenario: .echo)
        var (client, _) = try await RawClient.open(server)

        try await client.send(binary: [UInt8](repeating: 1, count: 1001))
        let (messages, _) = await client.readToEnd()
        #expect(messages == [.close(code: 1009, reason: "frame too big")])
        #expect(try await server.waitForEnd(ofConnection: 1).end?.reason == .protocolError(code: 1009))
        await server.stop()
    }

    // MARK: Handshake

    @Test func rejectAnswersStatusWithRetryAfterAndCloses() async throws {
        let server = try TestServer(scenario: .reject(status: 503, retryAfterSeconds: 7))
        var client = try await RawClient.connect(to: server)

        #expect(await client.handshakeResponse() == .failure(.rejected(status: 503, retryAfter: .seconds(7))))
        #expect(await client.readToEnd().end == .endOfStream)
        let record = try await server.waitForEnd(ofConnection: 1)
        #expect(record.handshake == .rejected(status: 503, retryAfterSeconds: 7))
        #expect(record.end?.reason == .handshakeRejected(status: 503))
        await server.stop()
    }

    @Test func badUpgradeIsAnsweredWith400() async throws {
        let server = try TestServer(scenario: .normal)
        let request = Array("GET /chat HTTP/1.1\r\nHost: localhost\r\nConnection: keep-alive\r\n\r\n".utf8)
        var client = try await RawClient.connect(to: server, rawRequest: request)

        #expect(await client.handshakeResponse() == .failure(.rejected(status: 400, retryAfter: nil)))
        let record = try await server.waitForEnd(ofConnection: 1)
        #expect(record.handshake == .invalid(reason: "Upgrade header missing or not websocket"))
        #expect(record.end?.reason == .handshakeRejected(status: 400))
        #expect(record.request == nil)
        await server.stop()
    }

    @Test func silentHandshakeRecordsTheRequestAndNeverAnswers() async throws {
        let server = try TestServer(scenario: .silentHandshake)
        var client = try await RawClient.connect(to: server, target: "/quiet")

        let record = try await server.waitForConnection(1) { $0.handshake == .ignored }
        #expect(record.request?.target == "/quiet")
        // Nothing was written: after closing our side, the end is the first and only event.
        client.connection.shutdownOutput()
        let first = await client.next()
        #expect(first.map { "\($0)" } == "ended(end of stream)")
        #expect(await client.next() == nil)
        let ended = try await server.waitForEnd(ofConnection: 1)
        #expect(ended.end?.reason == .peerClosedWithoutCloseFrame)
        await server.stop()
    }

    @Test func framesSentWithTheRequestAreHandledOnceTheConnectionOpens() async throws {
        let server = try TestServer(scenario: .echo)
        var encoder = WebSocketEncoder(role: .client)
        var frames: [UInt8] = []
        encoder.text("early", into: &frames)
        var client = try await RawClient.connect(to: server, appending: frames)

        _ = try await client.handshakeResponse().get()
        #expect(await client.nextMessage() == .text("early"))
        await server.stop()
    }

    @Test func invalidScenarioFromTheProviderIsAnswered500() async throws {
        let server = try TestServer { _ in .close(afterMilliseconds: 10, code: 999) }
        var client = try await RawClient.connect(to: server)

        #expect(await client.handshakeResponse() == .failure(.rejected(status: 500, retryAfter: nil)))
        #expect(try await server.waitForEnd(ofConnection: 1).end?.reason == .handshakeRejected(status: 500))
        await server.stop()
    }

    @Test func offeredSubprotocolIsSelected() async throws {
        let server = try TestServer(scenario: Scenario.normal.selecting(subprotocol: "chat"))
        let (_, chosen) = try await RawClient.open(server, subprotocols: ["superchat", "chat"])
        #expect(chosen.subprotocol == "chat")
        let (_, notOffered) = try await RawClient.open(server, subprotocols: ["other"])
        #expect(notOffered.subprotocol == nil)
        await server.stop()
    }

    @Test func scenarioIsChosenPerConnectionFromItsRequest() async throws {
        let server = try TestServer { context in
            context.path == "/busy" ? .reject(status: 429, retryAfterSeconds: 1) : .echo
        }
        var busy = try await RawClient.connect(to: server, target: "/busy?x=1")
        #expect(await busy.handshakeResponse() == .failure(.rejected(status: 429, retryAfter: .seconds(1))))
        var (echo, _) = try await RawClient.open(server, target: "/echo")
        try await echo.send(text: "hi")
        #expect(await echo.nextMessage() == .text("hi"))
        #expect(server.connections.map(\.index) == [1, 2])
        await server.stop()
    }

    // MARK: Streams and server pings

    @Test func sendsNMessagesAtTheInterval() async throws {
        let server = try TestServer(scenario: .send(count: 4, size: 12, kind: .text, everyMilliseconds: 25))
        // Taken before connecting, so it precedes the server's start of the scenario.
        let beforeOpen = ContinuousClock.now
        var (client, _) = try await RawClient.open(server)

        var arrivals: [Int] = []
        for index in 0..<4 {
            let expected = String("\(index)" + String(repeating: ".", count: 11))
            #expect(await client.nextMessage() == .text(expected))
            arrivals.append(milliseconds(since: beforeOpen))
        }
        #expect(arrivals[3] >= 3 * 25)
        let record = try await server.waitForConnection(1) { $0.sentMessageCount == 4 }
        #expect(record.sentMessageBytes == 48)
        await server.stop()
    }

    /// The feed is the server's, not the connection's: a second connection joins at the number the server is at,
    /// and from then on both carry the same numbers, the first with no gap.
    @Test(.timeLimit(.minutes(1)))
    func aBroadcastSendsTheServersNumbersToEveryOpenConnection() async throws {
        let server = try TestServer(scenario: .broadcast(everyMilliseconds: 10, size: 8))
        var (first, _) = try await RawClient.open(server)
        func number(_ message: WireMessage?) -> Int? {
            guard case .text(let text)? = message else { return nil }
            return Scenario.Broadcast.number(in: Array(text.utf8))
        }
        let start = try #require(number(await first.nextMessage()))
        var (second, _) = try await RawClient.open(server)
        let joined = try #require(number(await second.nextMessage()))
        let next = try #require(number(await second.nextMessage()))
        #expect(joined > start && next == joined + 1)
        var seen = [start]
        while seen.last! < next, let received = number(await first.nextMessage()) { seen.append(received) }
        #expect(seen == Array(start...next))  // no gap, and the second connection's numbers among them
        guard case .text(let payload)? = await first.nextMessage() else { Issue.record("no next message"); return }
        #expect(payload == "\(next + 1)" + String(repeating: ".", count: 8 - "\(next + 1)".count))
        await server.stop()
    }

    @Test func tenThousandMessagesStreamInOrderWhilePingsAreAnswered() async throws {
        let server = try TestServer(scenario: .send(count: 10_000, size: 100, kind: .binary))
        var (client, _) = try await RawClient.open(server)

        var received = 0
        var pongs: [[UInt8]] = []
        while received < 10_000 || pongs.count < 2 {
            guard let message = await client.nextMessage() else { break }
            switch message {
            case .binary(let payload):
                #expect(payload.prefix { $0 != UInt8(ascii: ".") } == Array(String(received).utf8))
                received += 1
                if received == 1 || received == 5_000 { try await client.ping([UInt8(received % 256)]) }
            case .pong(let payload):
                pongs.append(payload)
            default:
                Issue.record("unexpected \(message)")
            }
        }
        #expect(received == 10_000)
        #expect(pongs == [[1], [UInt8(5_000 % 256)]])
        let record = try await server.waitForConnection(1) { $0.pongsSent.count == 2 }
        #expect(record.sentMessageCount == 10_000)
        await server.stop()
    }

    @Test func serverPingsAreRecordedWithTheClientsPongs() async throws {
        let server = try TestServer(scenario: .serverPings(everyMilliseconds: 15))
        _ = try await RawClient.open(server, answersPings: true)

        let record = try await server.waitForConnection(1) { $0.pongsReceived.count >= 3 }
        #expect(record.pingsSent.prefix(3).map(\.payload) == [[0, 0, 0, 0, 0, 0, 0, 1], [0, 0, 0, 0, 0, 0, 0, 2],
            [0, 0, 0, 0, 0, 0, 0, 3]])
        #expect(record.pongsReceived.prefix(3).map(\.payload) == record.pingsSent.prefix(3).map(\.payload))
        #expect(record.pingsSent[2].at - record.openedAt! >= 44)
        await server.stop()
    }

    // MARK: Echo and recording

    @Test func echoReturnsTextAndBinaryIncludingOneMebibyte() async throws {
        let server = try TestServer(scenario: .echo)
        var (client, _) = try await RawClient.open(server)
        let large = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }

        try await client.send(text: "héllo")
        #expect(await client.nextMessage() == .text("héllo"))
        try await client.send(binary: large)
        #expect(await client.nextMessage() == .binary(large))
        try await client.send(binary: [])
        #expect(await client.nextMessage() == .binary([]))

        let record = try await server.waitForConnection(1) { $0.sentMessageCount == 3 }
        #expect(record.messages.map(\.size) == [6, 1 << 20, 0])
        #expect(record.messages.map(\.kind) == [.text, .binary, .binary])
        #expect(record.messages.allSatisfy { $0.payload == nil })
        await server.stop()
    }

    @Test func recordsRequestAndPayloadsWhileEventsNeverShowSecrets() async throws {
        let server = try TestServer(scenario: Scenario.echo.recordingPayloads())
        let events = server.events()
        var (client, _) = try await RawClient.open(
            server, target: "/chat?token=abc123", headers: [("Authorization", "Bearer s3cret")])
        try await client.send(text: "private body")
        #expect(await client.nextMessage() == .text("private body"))
        try await client.ping([1, 2, 3])
        #expect(await client.nextMessage() == .pong([1, 2, 3]))
        try await client.close(code: 1000)
        _ = await client.readToEnd()

        let record = try await server.waitForEnd(ofConnection: 1)
        #expect(record.request?.target == "/chat?token=abc123")
        #expect(record.request?.path == "/chat")
        #expect(record.request?.header("authorization") == "Bearer s3cret")
        #expect(record.request?.headerNames.contains("Authorization") == true)
        #expect(record.messages.map(\.payload) == [Array("private body".utf8)])
        #expect(record.pingsReceived.map(\.payload) == [[1, 2, 3]])

        var lines: [String] = []
        for await event in events {
            lines.append(event.description)
            if case .ended = event.kind { break }
        }
        #expect(lines == [
            "conn 1 connected",
            "conn 1 request /chat (6 headers)",
            "conn 1 opened",
            "conn 1 text 12 bytes",
            "conn 1 ping 3 bytes",
            "conn 1 pong sent 3 bytes",
            "conn 1 close received 1000",
            "conn 1 close sent 1000",
            "conn 1 ended: close handshake completed (initiated by client)",
        ])
        let all = lines.joined() + record.request!.headers.map(\.description).joined()
        for secret in ["abc123", "s3cret", "private"] { #expect(!all.contains(secret)) }
        await server.stop()
    }

    // MARK: Waiting and stopping

    @Test func waitThatCannotBeMetTimesOut() async throws {
        let server = try TestServer(scenario: .normal)
        await #expect(throws: TestServerError.timedOut(.milliseconds(20))) {
            try await server.waitUntil(timeout: .milliseconds(20)) { !$0.isEmpty }
        }
        await server.stop()
    }

    @Test func stopWithLiveConnectionsClosesEverySocketAndFailsWaits() async throws {
        let server = try TestServer { context in
            switch context.index {
            case 1: .silentHandshake
            case 2: Scenario.normal.pinging(everyMilliseconds: 5)
            default: .send(count: 1_000_000, size: 1024)
            }
        }
        let port = server.port
        var silent = try await RawClient.connect(to: server)
        var (pinged, _) = try await RawClient.open(server)
        var (flooded, _) = try await RawClient.open(server)
        try await server.waitUntil { $0.count == 3 && $0[0].handshake == .ignored }
        #expect(!SocketInventory.tcpInodes(port: port, ends: .local).isEmpty)

        let neverMet = Task { () async throws(TestServerError) in try await server.waitUntil { _ in false } }
        await server.stop()
        await #expect(throws: TestServerError.stopped) { try await neverMet.value }

        #expect(await silent.readToEnd().end == .failed(.reset))
        #expect(await pinged.readToEnd().end == .failed(.reset))
        #expect(await flooded.readToEnd().end == .failed(.reset))
        #expect(server.connections.map(\.end?.reason) == Array(repeating: .serverStopped, count: 3))
        let serverSockets = SocketInventory.tcpInodes(port: port, ends: .local)
        #expect(serverSockets.isDisjoint(with: SocketInventory.openSocketInodes()))
        #expect(server.loop.ownedDescriptorCount == 0)
        await server.stop()  // idempotent
    }

    @Test func listensOnIPv6Loopback() async throws {
        let server = try TestServer(configuration: .init(host: "::1"), scenario: .echo)
        #expect(server.url(path: "/x") == "ws://[::1]:\(server.port)/x")
        var (client, _) = try await RawClient.open(server)
        try await client.send(text: "v6")
        #expect(await client.nextMessage() == .text("v6"))
        await server.stop()
    }

    @Test func urlNamesHostPortAndPath() async throws {
        let server = try TestServer()
        #expect(server.url() == "ws://127.0.0.1:\(server.port)/")
        #expect(server.url(path: "chat") == "ws://127.0.0.1:\(server.port)/chat")
        await server.stop()
    }

    @Test func invalidScenarioIsRefusedBeforeListening() {
        #expect(throws: TestServerError.invalidScenario("close code 1005 may not be sent")) {
            try TestServer(scenario: .close(afterMilliseconds: 0, code: 1005))
        }
    }

    @Test func argumentsOutOfRangeAreTypedErrors() {
        #expect(throws: TestServerError.invalidArgument("maximumMessageSize (at least 125)")) {
            try TestServer(configuration: .init(maximumMessageSize: 124), scenario: .normal)
        }
        #expect(throws: TestServerError.invalidArgument("recordLimit (at least 0)")) {
            try TestServer(configuration: .init(recordLimit: -1), scenario: .normal)
        }
        #expect(throws: TestServerError.invalidArgument("endedConnectionLimit (at least 0)")) {
            try TestServer(configuration: .init(endedConnectionLimit: -1), scenario: .normal)
        }
        #expect(throws: TestServerError.invalidArgument("handshakeTimeout (more than 0)")) {
            try TestServer(configuration: .init(handshakeTimeout: .zero), scenario: .normal)
        }
        #expect(throws: TestServerError.invalidArgument("maximumHandshakingConnections (at least 1)")) {
            try TestServer(configuration: .init(maximumHandshakingConnections: 0), scenario: .normal)
        }
        #expect(throws: TestServerError.self) { try TestServer(configuration: .init(port: 70_000), scenario: .normal) }
    }

    @Test func aTakenPortIsRefusedSayingSo() async throws {
        let first = try TestServer(scenario: .normal)
        #expect(throws: TestServerError.listen("address already in use")) {
            try TestServer(configuration: .init(port: first.port), scenario: .normal)
        }
        await first.stop()
    }

    /// (The handshake itself is covered end to end by the client's TLS tests and `tether serve --tls-cert`'s.)
    @Test func pemFilesServeWSSAndAKeyGivenAsTheChainIsRefusedNamingTLS() async throws {
        // What a user outside the package does: PEM files (as `openssl req -x509` writes them), no TetherPOSIX type.
        let certificate = TestCertificateAuthority.selfSigned()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tether-tls-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let chain = directory.appendingPathComponent("chain.pem")
        let key = directory.appendingPathComponent("key.pem")
        try Data(certificate.certificatePEM).write(to: chain)
        try Data(certificate.privateKeyPEM).write(to: key)
        let server = try TestServer(
            configuration: .init(tls: TestServerTLS(certificateChain: .file(chain.path), privateKey: .file(key.path))),
            scenario: .echo)
        #expect(server.url(path: "/x").hasPrefix("wss://"))
        await server.stop()
        let refused = #expect(throws: TestServerError.self) {
            let wrong = TestServerTLS(certificateChain: .file(key.path), privateKey: .file(key.path))
            return try TestServer(configuration: .init(tls: wrong))
        }
        guard case .invalidArgument(let argument)? = refused else {
            Issue.record("expected invalidArgument, got \(String(describing: refused))")
            return
        }
        #expect(argument.hasPrefix("tls"))
    }
}
#endif
