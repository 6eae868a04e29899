#if os(Linux)
import Foundation
import Testing
import TetherPOSIX
@testable import TetherTestServer
@testable import TetherWire

/// The test server's outbound bound over real sockets: a client that sends and never reads the echoes is pushed back
/// by TCP instead of growing the server's memory, and gets every echo once it reads again.
@Suite(.timeLimit(.minutes(1)))
struct TestServerFlowControlTests {
    @Test func aClientThatSendsAndNeverReadsIsPushedBackThenGetsEveryEcho() async throws {
        let outbound = Watermarks(high: 256 << 10, low: 64 << 10)
        let server = try TestServer(configuration: .init(outboundWatermarks: outbound), scenario: .echo)
        let events = server.events()
        var (client, _) = try await RawClient.open(server)
        client.connection.pauseReading()  // the client reads none of the echoes

        // 32 MiB of 64 KiB messages: more than the client's receive buffer and the server's send buffer hold.
        let count = 512
        let size = 64 << 10
        let tcp = client.connection
        let flood = Task {
            var encoder = WebSocketEncoder(role: .client)
            for index in 0..<count {
                var bytes: [UInt8] = []
                encoder.binary([UInt8](repeating: UInt8(truncatingIfNeeded: index), count: size), into: &bytes)
                try await tcp.send(bytes)
            }
        }
        var paused: Int?
        for await event in events {
            if case .readingPaused(let queued) = event.kind {
                paused = queued
                break
            }
        }
        let queued = try #require(paused, "the server never stopped reading")
        // Above `high` by at most the echoes of what one turn had read (4 × 64 KiB) and one message.
        #expect(queued <= outbound.high + 4 * (64 << 10) + size, "queued \(queued)")
        let echoedWhenPaused = try #require(server.connection(1)).sentMessageCount
        #expect(echoedWhenPaused < count, "the server echoed everything: nothing pushed it back")

        tcp.resumeReading()
        var echoed = 0
        while echoed < count, let message = await client.nextMessage() {
            guard case .binary(let payload) = message, payload.count == size,
                  payload.first == UInt8(truncatingIfNeeded: echoed) else {
                Issue.record("echo \(echoed) is not what was sent")
                break
            }
            echoed += 1
        }
        #expect(echoed == count)
        try await flood.value
        try await client.close(code: 1000)
        _ = await client.readToEnd()
        await server.stop()
    }

    @Test func aClientThatStopsReadingAfterTheClosingHandshakeIsResetAtTheCloseTimeoutNotKeptUntilStop()
        async throws
    {
        // The high watermark is above all the echoes, so the server goes on reading and sees the client's close.
        let outbound = Watermarks(high: 64 << 20, low: 32 << 20)
        var scenario = Scenario.echo
        scenario.closeTimeoutMilliseconds = 200
        let server = try TestServer(configuration: .init(outboundWatermarks: outbound), scenario: scenario)
        var (client, _) = try await RawClient.open(server)
        client.connection.pauseReading()  // the client reads none of the echoes, nor the close frame behind them

        // 16 MiB of echoes: more than the client's receive buffer and the server's send buffer hold (loopback
        // autotunes up to 32 + 4 MiB here, but only as the receiver reads), so the server's final flush stalls.
        let message = [UInt8](repeating: 0x2a, count: 1 << 20)
        for _ in 0..<16 {
            try await client.send(binary: message)
        }
        try await client.close(code: 1000)
        // The server echoes the close and closes gracefully; the flush that cannot complete is bounded by the close
        // timeout, as the client's is: the connection ends while the server still runs.
        let record = try await server.waitForEnd(ofConnection: 1, timeout: .seconds(20))
        #expect(record.closeReceived?.code == 1000)
        #expect(record.end?.reason == .closeHandshakeCompleted(initiatedByServer: false))
        let end = try #require(record.end?.at)
        let closed = try #require(record.closeReceived?.at)
        #expect(end - closed >= 200, "ended \(end - closed) ms after the close: before the close timeout")
        #expect(record.sentMessageCount == 16)
        await server.stop()
    }
}
#endif
