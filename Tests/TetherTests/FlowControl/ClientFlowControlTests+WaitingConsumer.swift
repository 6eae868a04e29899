#if os(Linux)
import Foundation
import Synchronization
import Testing
@testable import Tether
import TetherCore
import TetherTesting
@testable import TetherWire

/// A consumer that waits for a message larger than `inboundWatermarks.high` takes it without a hold (nothing is behind
/// it); what comes behind it counts, and holds reading once the consumer is busy: the peer's stream stalls.
extension ClientFlowControlTests {
    @Test func aWaitingConsumerTakesAMessageLargerThanHighAndWhatFollowsItUnreadStallsThePeer() async throws {
        var peer = try ScriptedPeer()
        let inbound = Watermarks(high: 64 << 10, low: 16 << 10)
        var configuration = WebSocketConfiguration(
            url: peer.url(), heartbeatInterval: .seconds(60), pathMonitoring: .none)
        configuration.inboundWatermarks = inbound
        let client = try WebSocketClient(configuration: configuration)
        let (first, firstSink) = AsyncStream.makeStream(of: Int.self)
        // The consumer says when it is open and waits for the first message (the peer sends it once told), takes
        // it, and is busy from then on (it reads nothing more).
        let consumer = Task {
            for await event in client.events {
                if case .stateChanged(let state, _) = event, state.phase == .open {
                    try? await client.send(text: "go")
                }
                if case .message(let message, _) = event {
                    firstSink.yield(message.byteCount)
                    return
                }
            }
        }
        await client.start()
        let server = await peer.accept()
        try await server.open()
        while let message = try await server.nextMessage(), message != .text("go") {}

        // One write: a 100 KiB message, then 64 MiB of 16 KiB messages numbered from 0 (more than the kernels'
        // socket buffers hold on loopback), so that the first read after the large message brings more of them.
        let large = 100 << 10
        let count = 4_096
        let size = 16 << 10
        var encoder = WebSocketEncoder(role: .server)
        var bytes: [UInt8] = []
        encoder.binary([UInt8](repeating: 1, count: large), into: &bytes)
        let chunks = 64
        var stream: [[UInt8]] = []
        for chunk in 0..<chunks {
            var part: [UInt8] = []
            for index in (chunk * count / chunks)..<((chunk + 1) * count / chunks) {
                let digits = Array(String(index).utf8)
                encoder.binary(digits + [UInt8](repeating: 0x2E, count: size - digits.count), into: &part)
            }
            stream.append(part)
        }
        let written = Written()
        let tcp = server.tcp
        let writer = Task {
            try await tcp.send(bytes)
            for part in stream {
                try await tcp.send(part)
                written.chunks.add(1, ordering: .relaxed)
            }
        }
        #expect(await withDeadline { await first.first { _ in true } } == large)
        await consumer.value
        let held: Void? = await abandoning { await client.waitUntilReadingHeld() }
        #expect(held != nil, "the client kept reading its socket with nobody reading its events")
        let writtenWhenStalled = await Self.settled(written)
        #expect(writtenWhenStalled < chunks, "the peer wrote everything: nothing pushed it back")
        // The bound: `high` plus the message that crossed it and the records after it. The large message, handed to
        // the consumer that waited for it, is not in it (it is only if it came before the consumer waited: then it
        // crossed `high` itself, and is the message that crossed it).
        let event = WebSocketEvent.bufferOverhead
        let bound = inbound.high + max(size, large) + event + 4 * event
        #expect(client.eventBufferPeakWeight <= bound, "\(client.eventBufferPeakWeight)")

        // A reader again: the stream goes on, in order, to its end.
        var next = 0
        reading: for await event in client.events {
            guard case .message(.binary(let payload), _) = event else { continue }
            guard Int(String(decoding: payload.prefix(while: { $0 != 0x2E }), as: UTF8.self)) == next else { break }
            next += 1
            if next == count { break reading }
        }
        #expect(next == count, "stopped at \(next) of \(count)")
        try await writer.value
        await client.stop()
        await peer.stop()
    }

    /// The chunks `written` once their count has stayed the same for 300 ms (a peer's writes that stall against full
    /// socket buffers; ones that are not held back reach their end meanwhile).
    private static func settled(_ written: Written) async -> Int {
        var last = -1
        while true {
            let now = written.chunks.load(ordering: .relaxed)
            if now == last { return now }
            last = now
            // Not a synchronisation: the quiet period is what is measured.
            try? await Task.sleep(for: .milliseconds(300))
        }
    }
}

/// How many chunks of its stream the peer has handed to the kernel.
private final class Written: Sendable {
    let chunks = Atomic<Int>(0)
}
#endif
