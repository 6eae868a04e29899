#if os(Linux)
import Foundation
import Testing
@testable import Tether
import TetherTestServer
import TetherTesting

/// `send`'s per-message compression choice, over a connection that negotiated permessage-deflate with the test
/// server, which records whether each message came compressed (RSV1 on its first frame).
@Suite(.timeLimit(.minutes(1)))
struct WebSocketClientCompressionTests {
    /// About 2 KB of JSON-like text: above the 128-byte threshold.
    static let large = (0..<40).map { #"{"id":\#($0),"price":\#(100 + $0 % 7).5}"# }.joined()

    func client(_ server: TestServer, compression: CompressionOptions? = .standard) throws -> WebSocketClient {
        var configuration = WebSocketConfiguration(
            url: URL(string: server.url())!, heartbeatInterval: .seconds(60), pathMonitoring: .none)
        configuration.compression = compression
        return try WebSocketClient(configuration: configuration)
    }

    @Test func eachChoiceDecidesWhetherTheMessageGoesCompressed() async throws {
        let server = try TestServer(scenario: Scenario.normal.deflating())
        let client = try self.client(server)
        let recorder = EventRecorder(client.events)
        await client.start()
        #expect(await recorder.record(.opened) != nil)
        try await client.send(.text("small"))                                   // automatic, below the threshold
        try await client.send(.text(Self.large))                                // automatic, above it
        try await client.send(.text("small"), compression: .always)
        try await client.send(.binary(Data(Self.large.utf8)), compression: .never)
        try await client.send(.binary(Data(Self.large.utf8)), compression: .always)
        let record = try await server.waitUntil(timeout: .seconds(10)) { $0.first?.messages.count == 5 }
        let messages = try #require(record.first?.messages)
        #expect(messages.map(\.compressed) == [false, true, true, false, true])
        #expect(messages.map(\.size) == [5, Self.large.utf8.count, 5, Self.large.utf8.count, Self.large.utf8.count])
        await client.stop()
        await server.stop()
    }

    /// Queued messages carry their choice through the outbox, written once the connection opens.
    @Test func queuedMessagesKeepTheirChoiceThroughTheOutbox() async throws {
        let server = try TestServer(scenario: Scenario.normal.deflating())
        let client = try self.client(server)
        let recorder = EventRecorder(client.events)
        try await client.send(.text("small"), policy: .queued(expiresAfter: nil), compression: .always)
        try await client.send(.text(Self.large), policy: .queued(expiresAfter: nil), compression: .never)
        try await client.send(.text(Self.large), policy: .queued(expiresAfter: nil))
        await client.start()
        #expect(await recorder.record(.opened) != nil)
        let record = try await server.waitUntil(timeout: .seconds(10)) { $0.first?.messages.count == 3 }
        #expect(record.first?.messages.map(\.compressed) == [true, false, true])
        await client.stop()
        await server.stop()
    }

    /// Without compression negotiated, `.always` sends the message as it is.
    @Test func withoutCompressionNegotiatedAlwaysSendsAsItIs() async throws {
        let server = try TestServer(scenario: .normal)
        let client = try self.client(server, compression: nil)
        let recorder = EventRecorder(client.events)
        await client.start()
        #expect(await recorder.record(.opened) != nil)
        try await client.send(.text(Self.large), compression: .always)
        let record = try await server.waitUntil(timeout: .seconds(10)) { $0.first?.messages.count == 1 }
        #expect(record.first?.messages.map(\.compressed) == [false])
        #expect(record.first?.messages.map(\.size) == [Self.large.utf8.count])
        await client.stop()
        await server.stop()
    }
}
#endif
