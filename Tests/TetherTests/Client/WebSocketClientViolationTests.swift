#if os(Linux)
import Foundation
import Testing
@testable import Tether
import TetherCore
import TetherTesting
@testable import TetherWire

/// The client's session when its connection ends for a protocol violation while a heartbeat ping is out: the
/// violation is the reason, in the record and on the wire.
@Suite(.timeLimit(.minutes(1)))
struct WebSocketClientViolationTests {
    @Test func aViolationWhileAHeartbeatPingIsUnansweredClosesTheSessionForTheViolation() async throws {
        var peer = try ScriptedPeer()
        let configuration = WebSocketConfiguration(
            url: peer.url(), heartbeatInterval: .milliseconds(50),
            heartbeatTimeout: .seconds(30),  // the ping stays outstanding: this test answers it never
            maximumMessageSize: 1_024, pathMonitoring: .none)
        let client = try WebSocketClient(configuration: configuration)
        let recorder = EventRecorder(client.events)
        await client.start()
        let server = await peer.accept()
        try await server.open()
        guard case .ping? = try await server.nextMessage() else {
            Issue.record("the heartbeat's ping did not come first")
            return await client.stop()
        }
        try await server.sendBinary([UInt8](repeating: 1, count: 2_000))  // over the 1 KiB limit
        #expect(try await server.nextMessage() == .close(code: 1009, reason: "frame too big"))
        let closed = await recorder.record(.closed)
        #expect(closed?.reason == .protocolViolation(code: 1009) && closed?.code == 1009)
        #expect(!recorder.records.contains { $0.kind == .closed && $0.reason == .pingFailed })
        await client.stop()
        await peer.stop()
    }
}
#endif
