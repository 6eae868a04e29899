#if os(Linux)
import Foundation
import Testing
import TetherPOSIX
@testable import TetherTestServer
import TetherWire

/// The test server's outbound bound over real sockets: a client that sends and never reads the echoes is pushed back
/// by TCP instead of growing the server's memory, and gets every echo once it reads again.
@Suite(.timeLimit(.minutes(1)))
struct TestServerFlowControlTests {
    @Test func aClientThatSendsAndNeverReadsIsPushedBackThenGetsEveryEcho() async throws {
        let outbound = Watermarks(high: 256 << 10, low: 64 << 10)
        let server = try TestServer(outboundWatermarks: outbound, scenario: .echo)
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
}
#endif
