#if os(Linux)
import Foundation
import Synchronization
import Testing
@testable import Tether
import TetherCore
import TetherPOSIX
import TetherTestServer
@testable import TetherWire

/// The client's bounds over real sockets (docs/ARCHITECTURE.md §10), each asserted on what the other side observes:
/// a slow consumer stalls the server's stream; a peer that floods pings and never reads is pushed back and gets its
/// latest ping answered; a sender above the outbound watermark waits, and learns when its message was not sent.
@Suite(.timeLimit(.minutes(1)))
struct ClientFlowControlTests {
    /// Over ws:// and over wss:// (a throw-away CA the client trusts): the same stall, order and bound.
    @Test(arguments: [false, true])
    func aConsumerThatFallsBehindHoldsTheSocketSoTheServerStallsThenEverythingArrivesInOrder(tls: Bool)
        async throws
    {
        // 64 MiB: more than both kernels' socket buffers can hold (loopback autotunes up to 32 + 4 MiB here).
        let count = 4_096
        let size = 16 << 10
        let authority = TestCertificateAuthority()
        let server = try TestServer(
            configuration: .init(tls: tls ? authority.issue().serverTLS : nil),
            scenario: .send(count: count, size: size))
        let inbound = Watermarks(high: 256 << 10, low: 64 << 10)
        var configuration = WebSocketConfiguration(
            url: URL(string: server.url())!, heartbeatInterval: .seconds(60), pathMonitoring: .none)
        configuration.inboundWatermarks = inbound
        if tls {
            configuration.tls = TLSOptions(additionalTrustRoots: [.pem(Data(authority.certificate.certificatePEM))])
        }
        let client = try WebSocketClient(configuration: configuration)
        let events = client.events
        await client.start()

        // Nobody reads `events` yet: the client must stop reading once they weigh more than `high`, and then the
        // server's stream must stall against the full socket buffers. What it has sent is compared once it has
        // stopped changing: read at the moment of the hold, a socket that ignored the hold would still be behind.
        await client.waitUntilReadingHeld()
        let sentWhenStalled = try await Self.settledSentCount(of: server)
        #expect(sentWhenStalled < count, "the server handed everything to TCP: nothing pushed it back")

        var received = 0
        var held = 0
        var resumed = 0
        reading: for await event in events {
            switch event {
            case .message(.text(let text), _):
                // The stream's payload starts with the message's index.
                guard text.prefix(while: \.isNumber) == String(received) else {
                    Issue.record("message \(received) arrived as \(text.prefix(12))…")
                    break reading
                }
                received += 1
                if received == count { break reading }
            case .record(let record) where record.kind == .readingHeld:
                held += 1
            case .record(let record) where record.kind == .readingResumed:
                resumed += 1
            default:
                continue
            }
        }
        #expect(received == count)
        #expect(held >= 1 && resumed >= 1)
        // The bound: `high` plus the message that crossed it; the hold stops the read it came in at once, so only
        // records (the hold's own among them, 64 each) can follow it. Over TLS, the records one loop turn had read
        // (4 × 64 KiB) are decrypted in that turn, so they can come on top.
        let slack = tls ? 4 * (64 << 10) + size + 64 : size + 64 + 4 * 64
        #expect(client.eventBufferPeakWeight <= inbound.high + slack, "peak \(client.eventBufferPeakWeight)")
        await client.stop()
        await server.stop()
    }

    @Test func aPeerThatFloodsPingsAndNeverReadsCannotGrowTheWriteQueueAndItsLatestPingIsAnswered() async throws {
        let outbound = Watermarks(high: 64 << 10, low: 16 << 10)
        let (peer, server, connection, opened, flow) = try await self.openToAPeerThatStopsReading(outbound)
        var client = opened
        let observations = flow.observations
        // 32 MiB of 125-byte pings: more than the peer's receive buffer and the client's send buffer hold.
        let chunks = 256
        let pingsPerChunk = 1_024
        let tcp = server.tcp
        let (milestones, milestone) = AsyncStream.makeStream(of: String.self)
        let flood = Task {
            var encoder = WebSocketEncoder(role: .server)
            for chunk in 0..<chunks {
                var bytes: [UInt8] = []
                for ping in 0..<pingsPerChunk {
                    let index = UInt32(chunk * pingsPerChunk + ping)
                    let payload = withUnsafeBytes(of: index.bigEndian) { Array($0) } + [UInt8](repeating: 0, count: 121)
                    try encoder.ping(payload, into: &bytes)
                }
                try await tcp.send(bytes)
            }
            milestone.yield("flood written")
        }
        // The client either reads the whole flood, answering it with few pongs (coalesced behind a backlog), or
        // stops reading once its write queue is over `high`: either way the queue stays bounded.
        let watcher = Task {
            var peak = 0
            for await observation in observations {
                switch observation {
                case .owedWritten(let queued):
                    peak = max(peak, queued)
                case .readingPausedForWriteRoom(let queued):
                    peak = max(peak, queued)
                    milestone.yield("client stopped reading")
                default:
                    continue
                }
            }
            return peak
        }
        var reached = milestones.makeAsyncIterator()
        #expect(await reached.next() != nil)
        tcp.resumeReading()  // the peer reads again: the pongs drain and the flood ends
        try await flood.value
        try await server.sendPing(Array("last".utf8))
        var pongs = 0
        while let message = try await server.nextMessage() {
            guard case .pong(let payload) = message else { continue }
            pongs += 1
            if payload == Array("last".utf8) { break }
        }
        // Far fewer pongs than pings, and the latest ping answered all the same.
        #expect(pongs < chunks * pingsPerChunk / 2, "\(pongs) pongs")
        connection.close(code: 1000, reason: "")
        try await server.sendClose(code: 1000)
        _ = await client.rest()
        await peer.stop()
        flow.end.finish()
        let peak = await watcher.value
        // At most `high`, plus the pongs owed for one read of pings (64 KiB of them).
        #expect(peak <= outbound.high + (64 << 10), "peak \(peak)")
    }

    @Test func aSendAboveTheOutboundWatermarkWaitsAndIsNotSentWhenTheConnectionEnds() async throws {
        let outbound = Watermarks(high: 256 << 10, low: 64 << 10)
        let (peer, server, connection, opened, flow) = try await self.openToAPeerThatStopsReading(outbound)
        var client = opened
        let observations = flow.observations

        // Senders of 1 MiB each, at once, while the peer reads nothing: the kernel's buffers fill, then the queue.
        let outcomes = Outcomes()
        let senders = Task {
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<12 {
                    group.addTask {
                        let outcome: String
                        do {
                            try await connection.send(.binary(Data(repeating: 7, count: 1 << 20)))
                            outcome = "sent"
                        } catch WebSocketSendError.notOpen {
                            outcome = "not sent"
                        } catch {
                            outcome = "failed: \(error)"
                        }
                        outcomes.list.withLock { $0.append(outcome) }
                    }
                }
            }
        }
        var iterator = observations.makeAsyncIterator()
        while let observation = await iterator.next() {
            if case .sendWaitingForRoom(let queued) = observation {
                #expect(queued > outbound.high)
                break
            }
        }
        server.reset()  // the connection ends while sends wait for room
        await senders.value
        let seen = outcomes.list.withLock { $0 }
        #expect(seen.count == 12)
        #expect(seen.contains("not sent"), "\(seen)")  // a waiting send learns that nothing of it went out
        #expect(seen.allSatisfy { $0 == "sent" || $0 == "not sent" || $0.hasPrefix("failed: connectionFailed") })
        _ = await client.rest()
        await peer.stop()
    }

    /// The server's count of messages sent on connection 1 once it has stayed the same for 300 ms (a stream that
    /// stalls against full socket buffers; one that is not held back reaches its end meanwhile).
    private static func settledSentCount(of server: TestServer) async throws -> Int {
        var last = -1
        while true {
            let sent = try #require(server.connection(1)).sentMessageCount
            if sent == last { return sent }
            last = sent
            // Not a synchronisation: the quiet period is what is measured.
            try await Task.sleep(for: .milliseconds(300))
        }
    }

    /// A socket connection with `outbound` watermarks, open to a scripted peer that then stops reading, and what its
    /// flow control does.
    private func openToAPeerThatStopsReading(_ outbound: Watermarks) async throws -> (
        ScriptedPeer, PeerConnection, SocketConnection, ClientProbe,
        (observations: AsyncStream<FlowObservation>, end: AsyncStream<FlowObservation>.Continuation)
    ) {
        var peer = try ScriptedPeer()
        let (observations, observe) = AsyncStream.makeStream(of: FlowObservation.self)
        let connection = SocketConnection(
            request: TransportRequest(url: peer.url(), outboundWatermarks: outbound), loop: .shared,
            flowObserver: { observe.yield($0) })
        var client = ClientProbe(connection)
        let server = await peer.accept()
        try await server.open()
        #expect(await client.next() == .opened(nil))
        server.tcp.pauseReading()  // the peer reads nothing from now on
        return (peer, server, connection, client, (observations, observe))
    }
}

/// How each concurrent send ended.
private final class Outcomes: Sendable {
    let list = Mutex<[String]>([])
}
#endif
