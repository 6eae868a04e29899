#if os(Linux)
import Foundation
import Testing
@testable import Tether
import TetherCore
import TetherTestServer
import TetherTesting

/// The inbound bound when the reader of `events` goes away mid-stream (a view's `.task` cancelled) and another comes:
/// the events wait within the watermarks as before the first reader, and the next reader goes on from there.
extension ClientFlowControlTests {
    @Test func aReaderCancelledMidStreamDetachesTheNextGoesOnFromThereAndTheHoldBoundsWhatWaits() async throws {
        let count = 2_000
        let size = 4 << 10
        let server = try TestServer(scenario: .send(count: count, size: size))
        let inbound = Watermarks(high: 128 << 10, low: 32 << 10)
        var configuration = WebSocketConfiguration(
            url: URL(string: server.url())!, heartbeatInterval: .seconds(60), pathMonitoring: .none)
        configuration.inboundWatermarks = inbound
        let client = try WebSocketClient(configuration: configuration)
        let (progress, reached) = AsyncStream.makeStream(of: Int.self)
        // The first reader: a view's task, cancelled after it has read 100 messages (it may read a few more before the
        // cancellation reaches it). The indices it read come back from the task.
        let first = Task {
            var indices: [Int] = []
            for await event in client.events {
                guard case .message(.text(let text), _) = event, let index = Int(text.prefix(while: \.isNumber)) else {
                    continue
                }
                indices.append(index)
                if indices.count == 100 { reached.yield(100) }
            }
            return indices
        }
        await client.start()
        _ = await withDeadline { await progress.first { _ in true } }
        first.cancel()
        let firstRead = await first.value
        // Nobody reads now: the client holds its socket above `high`.
        let held: Void? = await abandoning { await client.waitUntilReadingHeld() }
        #expect(held != nil, "the client kept reading its socket with nobody reading its events")

        // The next reader: from where the first stopped, every message once, in order.
        var next = firstRead.count
        var inOrder = true
        reading: for await event in client.events {
            guard case .message(.text(let text), _) = event else { continue }
            inOrder = inOrder && Int(text.prefix(while: \.isNumber)) == next
            next += 1
            if next == count || !inOrder { break reading }
        }
        #expect(firstRead == Array(0..<firstRead.count))
        #expect(inOrder && next == count, "stopped at \(next) of \(count)")
        // The bound, as with no reader at all: `high` plus the message that crossed it and the records after it.
        #expect(client.eventBufferPeakWeight <= inbound.high + size + 64 + 4 * 64, "\(client.eventBufferPeakWeight)")
        await client.stop()
        await server.stop()
    }
}
#endif
