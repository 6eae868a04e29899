#if os(Linux)
import Foundation
import Synchronization
import Testing
@testable import Tether
import TetherCore
import TetherPOSIX
import TetherTestServer
@testable import TetherWire

/// The client's bounds hold over TLS too (docs/ARCHITECTURE.md §10): TLS buffers nothing beside the watermarks —
/// records wait in the TCP write queue the outbound watermarks measure. (The held reader over TLS is the
/// `tls: true` case of `ClientFlowControlTests`.)
@Suite(.timeLimit(.minutes(1)))
struct ClientFlowControlTLSTests {
    static let authority = TestCertificateAuthority()
    static let certificate = Self.authority.issue()
    static let trusting = TLSOptions(additionalTrustRoots: [.pem(Data(Self.authority.certificate.certificatePEM))])

    @Test func sendsAboveTheOutboundWatermarkWaitForTheTLSRecordsToDrainThenAllArrive() async throws {
        var peer = try ScriptedPeer(tls: Self.certificate.serverOptions)
        let (observations, observe) = AsyncStream.makeStream(of: FlowObservation.self)
        let outbound = Watermarks(high: 256 << 10, low: 64 << 10)
        let url = peer.url()
        let connection = SocketConnection(
            request: TransportRequest(url: url, outboundWatermarks: outbound, tls: Self.trusting), loop: .shared,
            flowObserver: { observe.yield($0) })
        var client = ClientProbe(connection)
        let server = await peer.accept()
        try await server.open()
        #expect(await client.next() == .opened(nil))
        server.tcp.pauseReading()

        let senders = 12
        let sent = Task {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<senders {
                    group.addTask {
                        try await connection.send(.binary(Data(repeating: UInt8(index), count: 1 << 20)))
                    }
                }
                try await group.waitForAll()
            }
        }
        var iterator = observations.makeAsyncIterator()
        while let observation = await iterator.next() {
            if case .sendWaitingForRoom(let queued) = observation {
                // The records of the sends that went first wait in the TCP queue, counted against `high`.
                #expect(queued > outbound.high)
                #expect(queued <= outbound.high + senders * ((1 << 20) + 2_048), "queued \(queued)")
                break
            }
        }
        server.tcp.resumeReading()
        var payloads: Set<UInt8> = []
        for _ in 0..<senders {
            guard case .binary(let bytes)? = try await server.nextMessage() else {
                Issue.record("a message is missing")
                break
            }
            #expect(bytes.count == 1 << 20 && Set(bytes).count == 1)
            payloads.insert(bytes[0])
        }
        try await sent.value
        #expect(payloads == Set((0..<senders).map(UInt8.init)))
        connection.close(code: 1000, reason: "")
        _ = try await server.nextMessage()
        try await server.sendClose(code: 1000)
        #expect(await client.rest() == [.ended(.closedLocally)])
        await peer.stop()
    }
}
#endif
