import Testing
@testable import TetherPOSIX
@testable import TetherTestServer
import TetherWire

/// What a client cannot grow: records per connection, ended connections, event streams (DESIGN §10).
@Suite(.timeLimit(.minutes(1)))
struct TestServerBoundsTests {
    // MARK: Records

    @Test func aFloodKeepsTheFirstRecordsOfEachListAndCountsEveryOne() async throws {
        let server = try TestServer(recordLimit: 10, scenario: .echo)
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
        let server = try TestServer(recordLimit: 3, scenario: .serverPings(everyMilliseconds: 2))
        _ = try await RawClient.open(server, answersPings: true)

        let record = try await server.waitForConnection(1) { $0.pongsReceived.total >= 6 }
        #expect(record.pingsSent.count == 3 && record.pingsSent.total >= 6)
        #expect(record.pongsReceived.count == 3 && record.pongsReceived.dropped == record.pongsReceived.total - 3)
        #expect(record.pingsSent.map(\.payload) == (1...3).map { [0, 0, 0, 0, 0, 0, 0, UInt8($0)] })
        #expect(record.pongsReceived.map(\.payload) == record.pingsSent.map(\.payload))
        await server.stop()
    }

    @Test func onlyTheLastEndedConnectionsAreKeptAndTheOthersCounted() async throws {
        let server = try TestServer(endedConnectionLimit: 2, scenario: .echo)
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
}
