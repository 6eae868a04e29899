#if os(Linux)
import Testing
@testable import TetherPOSIX
@testable import TetherTestServer
@testable import TetherWire

/// What a client cannot grow: records per connection, ended connections, event streams, the
/// handshake phase in time and in number, and the accept loop out of descriptors (docs/ARCHITECTURE.md §10).
@Suite(.timeLimit(.minutes(1)))
struct TestServerBoundsTests {
    // MARK: Records

    @Test func aFloodKeepsTheFirstRecordsOfEachListAndCountsEveryOne() async throws {
        let server = try TestServer(configuration: .init(recordLimit: 10), scenario: .echo)
        let events = server.events(bufferLimit: 5)  // never read during the flood
        var (client, _) = try await RawClient.open(server)

        // 1,000 pings, each followed by a text message, in ten writes.
        for batch in 0..<10 {
            try await client.send { encoder, bytes in
                for number in (batch * 100)..<(batch * 100 + 100) {
                    try encoder.ping([UInt8(number >> 8), UInt8(number & 0xFF)], into: &bytes)
                    encoder.text("m\(number)", into: &bytes)
                }
            }
        }
        var pongs = 0
        var echoes = 0
        while pongs < 1_000 || echoes < 1_000, let message = await client.nextMessage() {
            switch message {
            case .pong: pongs += 1
            case .text: echoes += 1
            default: Issue.record("unexpected \(message)")
            }
        }
        #expect(pongs == 1_000 && echoes == 1_000)  // every one answered, whatever was kept

        let record = try await server.waitForConnection(1) { $0.pongsSent.total == 1_000 && $0.messageCount == 1_000 }
        #expect(record.pingsReceived.count == 10)
        #expect(record.pingsReceived.total == 1_000 && record.pingsReceived.dropped == 990)
        #expect(record.pingsReceived.map(\.payload) == (0..<10).map { [0, UInt8($0)] })
        #expect(record.pongsSent.count == 10 && record.pongsSent.total == 1_000)
        #expect(record.pongsSent.map(\.payload) == record.pingsReceived.map(\.payload))
        #expect(record.messages.count == 10 && record.messages.total == 1_000 && record.messages.dropped == 990)
        #expect(record.messages.map(\.size) == Array(repeating: 2, count: 10))  // "m0" ... "m9"
        #expect(record.sentMessageCount == 1_000)

        // The unread stream kept the newest five of the 3,003 events (connected, request, opened, and
        // per ping a ping and a pong event and per message one) and counted the rest.
        #expect(server.droppedEventCount == 3_003 - 5)
        var newest: [ServerEvent.Kind] = []
        var iterator = events.makeAsyncIterator()
        for _ in 0..<5 { if let event = await iterator.next() { newest.append(event.kind) } }
        #expect(newest == [
            .pongSent(bytes: 2), .message(.text, bytes: 4),  // ping 998's pong, "m998"
            .pingReceived(bytes: 2), .pongSent(bytes: 2), .message(.text, bytes: 4),  // ping 999, "m999"
        ])
        await server.stop()
    }

    @Test func serverPingsAndTheClientsPongsAreCappedToo() async throws {
        let server = try TestServer(configuration: .init(recordLimit: 3), scenario: .serverPings(everyMilliseconds: 2))
        _ = try await RawClient.open(server, answersPings: true)

        let record = try await server.waitForConnection(1) { $0.pongsReceived.total >= 6 }
        #expect(record.pingsSent.count == 3 && record.pingsSent.total >= 6)
        #expect(record.pongsReceived.count == 3 && record.pongsReceived.dropped == record.pongsReceived.total - 3)
        #expect(record.pingsSent.map(\.payload) == (1...3).map { [0, 0, 0, 0, 0, 0, 0, UInt8($0)] })
        #expect(record.pongsReceived.map(\.payload) == record.pingsSent.map(\.payload))
        await server.stop()
    }

    @Test func onlyTheLastEndedConnectionsAreKeptAndTheOthersCounted() async throws {
        let server = try TestServer(configuration: .init(endedConnectionLimit: 2), scenario: .echo)
        var (live, _) = try await RawClient.open(server)  // connection 1 stays open throughout
        for index in 2...6 {
            var (client, _) = try await RawClient.open(server)
            try await client.close(code: 1000)
            _ = await client.readToEnd()
            try await server.waitForEnd(ofConnection: index)
        }

        #expect(server.connections.map(\.index) == [1, 5, 6])
        #expect(server.acceptedConnectionCount == 6 && server.droppedConnectionCount == 3)
        #expect(server.connection(2) == nil && server.connection(4) == nil)
        #expect(server.connection(5)?.end?.reason == .closeHandshakeCompleted(initiatedByServer: false))
        #expect(server.connection(1)?.hasEnded == false)
        try await live.send(text: "still served")
        #expect(await live.nextMessage() == .text("still served"))
        let first = try await server.waitForConnection(1) { $0.messageCount == 1 }
        #expect(first.index == 1)
        await server.stop()
    }

    // MARK: Handshake in time

    @Test func aSocketWithoutACompleteRequestIsClosedAtTheHandshakeTimeout() async throws {
        let server = try TestServer(configuration: .init(handshakeTimeout: .milliseconds(200)), scenario: .normal)
        // Accepting waits until the partial request is in, so that a stalled test cannot send it late.
        let holdAccepts = DescriptorExhaustion()
        holdAccepts.refuseAll(true)
        server.setAcceptGate { holdAccepts.gate() }
        let start = ContinuousClock.now
        var silent = try await SilentSocket.connect(to: server)
        var partial = try await SilentSocket.connect(to: server)
        try await partial.connection.send(Array("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n".utf8))
        holdAccepts.refuseAll(false)

        let (end, bytes) = await silent.end()
        let elapsed = milliseconds(since: start)
        #expect(end == .endOfStream && bytes == 0)  // closed, nothing answered
        #expect(elapsed >= 200)  // never early, as the client sees it
        #expect(await partial.end() == (.endOfStream, 0))

        let records = try await server.waitUntil { $0.count == 2 && $0.allSatisfy(\.hasEnded) }
        for record in records {
            #expect(record.end?.reason == .handshakeTimedOut)
            // Timed by the server's own clock from the accept: at the timeout, not much later (what the test's own
            // scheduling adds on a loaded machine is not the server's doing).
            let held = record.end!.at - record.acceptedAt
            #expect(held >= 199 && held < 200 + 2_000, "\(held) ms")
            #expect(record.request == nil && record.handshake == nil)
        }
        await server.stop()
    }

    @Test func theHandshakeTimeoutSparesARequestLeftUnansweredOnPurpose() async throws {
        let server = try TestServer(
            configuration: .init(handshakeTimeout: .milliseconds(100)), scenario: .silentHandshake)
        // Accepted once its request is in, so that a stalled test cannot send it after the timeout.
        let holdAccepts = DescriptorExhaustion()
        holdAccepts.refuseAll(true)
        server.setAcceptGate { holdAccepts.gate() }
        var ignored = try await RawClient.connect(to: server)
        holdAccepts.refuseAll(false)
        try await server.waitForConnection(1) { $0.handshake == .ignored }

        // A silent socket accepted later times out later than the first one's timer would have fired.
        var silent = try await SilentSocket.connect(to: server)
        #expect(await silent.end().end == .endOfStream)
        #expect(try await server.waitForEnd(ofConnection: 2).end?.reason == .handshakeTimedOut)
        #expect(server.connection(1)?.hasEnded == false)

        // Still open and never answered: after closing our side, the end is the first event.
        ignored.connection.shutdownOutput()
        #expect(await ignored.next().map { "\($0)" } == "ended(end of stream)")
        await server.stop()
    }

    // MARK: Handshake in number

    @Test func pastTheHandshakeCapTheOldestSilentSocketIsResetAndAClientStillOpens() async throws {
        let server = try TestServer(configuration: .init(maximumHandshakingConnections: 3), scenario: .echo)
        var silent: [SilentSocket] = []
        for count in 1...4 {
            silent.append(try await SilentSocket.connect(to: server))
            try await server.waitUntil { $0.count == count }  // accepted in this order
        }
        // The fourth made room by resetting the first.
        #expect(await silent[0].end().end == .failed(.reset))
        #expect(try await server.waitForEnd(ofConnection: 1).end?.reason == .handshakeDropped)

        // A well-behaved client is the fifth: it resets the second and opens.
        var (client, _) = try await RawClient.open(server)
        try await client.send(text: "served")
        #expect(await client.nextMessage() == .text("served"))
        #expect(await silent[1].end().end == .failed(.reset))
        let records = try await server.waitUntil { $0.count == 5 && $0[1].hasEnded }
        #expect(records.map(\.end?.reason) == [.handshakeDropped, .handshakeDropped, nil, nil, nil])
        #expect(records[4].handshake == .accepted(subprotocol: nil))
        await server.stop()
    }

    // MARK: Out of descriptors

    @Test func outOfDescriptorsASilentSocketThatHadItsChanceMakesRoomForANewClient() async throws {
        let server = try TestServer(scenario: .echo)
        var silent = try await SilentSocket.connect(to: server)
        try await server.waitUntil { $0.count == 1 }
        let exhaustion = DescriptorExhaustion()
        exhaustion.refuseAll(true)
        server.setAcceptGate { exhaustion.gate() }

        var client = try await RawClient.connect(to: server)
        // Reset once it has waited a back-off in the handshake (not at once: a connection accepted
        // just now may have its request waiting unread).
        #expect(await silent.end().end == .failed(.reset))
        exhaustion.refuseAll(false)
        _ = try await client.handshakeResponse().get()
        try await client.send(text: "served")
        #expect(await client.nextMessage() == .text("served"))

        let records = try await server.waitUntil { $0.count == 2 && $0[0].hasEnded }
        #expect(records.map(\.end?.reason) == [.handshakeDropped, nil])
        let dropped = records[0]
        #expect(dropped.end!.at - dropped.acceptedAt >= 49)
        #expect(exhaustion.refusedCount >= 2)
        await server.stop()
    }

    @Test func outOfDescriptorsWithNothingToDropAcceptingPausesWithoutSpinningThenResumes() async throws {
        let server = try TestServer(scenario: .echo)
        var (open, _) = try await RawClient.open(server)  // an open connection is never dropped
        let exhaustion = DescriptorExhaustion()
        exhaustion.refuseAll(true)
        server.setAcceptGate { exhaustion.gate() }

        // TCP completes in the kernel's backlog and the request is sent; the server cannot accept it.
        var waiting = try await RawClient.connect(to: server)
        var refusals = exhaustion.refusals.makeAsyncIterator()
        var times: [ContinuousClock.Instant] = []
        while times.count < 4, let time = await refusals.next() { times.append(time) }
        // Each retry waited out the back-off: a busy loop would have made these four in microseconds.
        for (earlier, later) in zip(times, times.dropFirst()) {
            #expect(later - earlier >= TCPListener.acceptBackoff)
        }
        #expect(server.acceptedConnectionCount == 1)

        exhaustion.refuseAll(false)  // descriptors free up
        _ = try await waiting.handshakeResponse().get()
        try await waiting.send(text: "served at last")
        #expect(await waiting.nextMessage() == .text("served at last"))
        try await open.send(text: "and still")
        #expect(await open.nextMessage() == .text("and still"))
        #expect(server.connections.map(\.end) == [nil, nil])
        await server.stop()
    }
}
#endif
