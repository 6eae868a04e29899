#if os(Linux)
import Foundation
import Testing
import TetherTestServer
import TetherWire
@testable import Tether

/// permessage-deflate between `SocketTransport` and the test server: the offer, the server's answer, messages
/// compressed both ways, and answers the client must refuse.
@Suite struct SocketTransportCompressionTests {
    /// A JSON-like text of about 20 KB that compresses well.
    static let feed = (0..<300).map { #"{"id":\#($0),"symbol":"TTHR","price":\#(100 + $0 % 7).5}"# }.joined()

    func connect(_ server: TestServer, _ compression: CompressionOptions?) -> ClientProbe {
        ClientProbe(SocketTransport().connect(
            TransportRequest(url: URL(string: server.url())!, compression: compression)))
    }

    @Test func anAcceptedOfferCompressesBothWaysAndTheMessagesArriveWhole() async throws {
        let server = try TestServer(scenario: Scenario.echo.deflating())
        var client = self.connect(server, .standard)
        #expect(await client.next() == .opened(nil))
        try await client.connection.send(.text(Self.feed))
        #expect(await client.next() == .text(Self.feed))
        try await client.connection.send(.text("short"))
        #expect(await client.next() == .text("short"))
        client.connection.close(code: 1000, reason: "")
        #expect(await client.rest() == [.ended(.closedLocally)])
        let record = try await server.waitForEnd(ofConnection: 1)
        #expect(record.request?.header("Sec-WebSocket-Extensions") == "permessage-deflate; client_max_window_bits")
        #expect(record.compression == PerMessageDeflateParameters())
        #expect(record.messages.map(\.size) == [Self.feed.utf8.count, 5])
        await server.stop()
    }

    /// Eight tasks send at once on a connection compressed with context takeover both ways, each awaiting its own
    /// sends: the test server inflates every message against the ones before it as they came on the wire, and
    /// echoes it; every echo is what was sent, each task's in its order (a frame overtaking one compressed before it
    /// fails to inflate, or inflates into another message).
    @Test func concurrentSendersOnACompressedConnectionArriveIntactAndInEachTasksOrder() async throws {
        let server = try TestServer(scenario: Scenario.echo.deflating())
        var client = self.connect(server, .standard)
        #expect(await client.next() == .opened(nil))
        let connection = client.connection
        let senders = ConcurrentSenders(tasks: 8, count: 400)
        try await senders.send { try await connection.send(.text($0)) }
        await senders.expectEchoes {
            guard case .text(let text)? = await client.next() else { return nil }
            return text
        }
        client.connection.close(code: 1000, reason: "")
        #expect(await client.rest() == [.ended(.closedLocally)])
        let record = try await server.waitForEnd(ofConnection: 1)
        #expect(record.messageCount == senders.tasks * senders.count)
        #expect(record.closeReceived?.code == 1000)
        await server.stop()
    }

    /// Sending tasks cancelled while they have sends to do (a view's task that goes away) are not interrupted: a
    /// send returns once its frame is in the kernel, so no frame is left half-written and the compression contexts of
    /// both sides stay in step: every message arrives whole, each task's in its order.
    @Test func cancelledSendersLeaveNoFrameHalfWrittenAndEveryMessageArrivesWhole() async throws {
        let server = try TestServer(scenario: Scenario.echo.deflating())
        var client = self.connect(server, .standard)
        #expect(await client.next() == .opened(nil))
        let connection = client.connection
        let senders = ConcurrentSenders(tasks: 4, count: 100)
        let sending = Task { try await senders.send { try await connection.send(.text($0)) } }
        sending.cancel()
        try await sending.value
        await senders.expectEchoes {
            guard case .text(let text)? = await client.next() else { return nil }
            return text
        }
        client.connection.close(code: 1000, reason: "")
        #expect(await client.rest() == [.ended(.closedLocally)])
        await server.stop()
    }

    @Test func withoutContextTakeoverAndSmallWindowsTheAgreementHoldsAndMessagesArrive() async throws {
        let policy = PerMessageDeflateServerPolicy(
            serverNoContextTakeover: true, clientNoContextTakeover: true, serverMaxWindowBits: 10,
            clientMaxWindowBits: 9)
        let server = try TestServer(scenario: Scenario.echo.deflating(policy))
        var client = self.connect(server, .standard)
        #expect(await client.next() == .opened(nil))
        for _ in 0..<3 {
            try await client.connection.send(.binary(Data(Self.feed.utf8)))
            #expect(await client.next() == .binary(Data(Self.feed.utf8)))
        }
        client.connection.close(code: 1000, reason: "")
        #expect(await client.rest() == [.ended(.closedLocally)])
        let record = try await server.waitForEnd(ofConnection: 1)
        #expect(record.compression == PerMessageDeflateParameters(
            serverNoContextTakeover: true, clientNoContextTakeover: true, serverMaxWindowBits: 10,
            clientMaxWindowBits: 9))
        await server.stop()
    }

    @Test func aServerThatDeclinesOpensWithoutCompression() async throws {
        let server = try TestServer(scenario: .echo)
        var client = self.connect(server, CompressionOptions(offers: [.standard, .bare]))
        #expect(await client.next() == .opened(nil))
        try await client.connection.send(.text(Self.feed))
        #expect(await client.next() == .text(Self.feed))
        client.connection.close(code: 1000, reason: "")
        #expect(await client.rest() == [.ended(.closedLocally)])
        let record = try await server.waitForEnd(ofConnection: 1)
        #expect(record.request?.header("Sec-WebSocket-Extensions")
            == "permessage-deflate; client_max_window_bits, permessage-deflate")
        #expect(record.compression == nil)
        await server.stop()
    }

    @Test func anAnswerBreakingTheRulesIsHandshakeInvalidNamingWhatFailed() async throws {
        var scenario = Scenario.echo
        scenario.deflate = .answer(
            "permessage-deflate; client_max_window_bits=10", parameters: PerMessageDeflateParameters())
        let server = try TestServer(scenario: scenario)
        var client = self.connect(server, CompressionOptions(offers: [.bare]))
        #expect(await client.rest() == [.ended(.handshakeInvalid(
            detail: "permessage-deflate: client_max_window_bits answered but not offered"))])
        await server.stop()
    }

    @Test func anExtensionAnsweredWhenNoneWasOfferedIsHandshakeInvalid() async throws {
        var scenario = Scenario.echo
        scenario.deflate = .answer("permessage-deflate", parameters: PerMessageDeflateParameters())
        let server = try TestServer(scenario: scenario)
        var client = self.connect(server, nil)
        #expect(await client.rest() == [.ended(.handshakeInvalid(detail: "extension not offered"))])
        await server.stop()
    }

    @Test func compressionSettingsAreValidatedWithTheirNames() {
        func refusal(_ options: CompressionOptions) -> String? {
            var configuration = WebSocketConfiguration(url: URL(string: "ws://127.0.0.1:9/")!)
            configuration.compression = options
            do {
                try configuration.validate()
                return nil
            } catch {
                return error.property
            }
        }
        #expect(refusal(.standard) == nil)
        #expect(refusal(CompressionOptions(offers: [])) == "compression.offers")
        #expect(refusal(CompressionOptions(offers: [.bare, PerMessageDeflateOffer(clientMaxWindowBits: .limit(8))]))
            == "compression.offers[1].client_max_window_bits")
        #expect(refusal(CompressionOptions(offers: [PerMessageDeflateOffer(serverMaxWindowBits: 16)]))
            == "compression.offers[0].server_max_window_bits")
        #expect(refusal(CompressionOptions(threshold: -1)) == "compression.threshold")
        #expect(refusal(CompressionOptions(memoryLevel: 0)) == "compression.memoryLevel")
        var request = TransportRequest(url: URL(string: "ws://127.0.0.1:9/")!)
        request.compression = .standard
        #expect(URLSessionTransport.unsupportedSetting(in: request, on: .apple)?.property == "compression")
    }
}
#endif
