#if os(Linux)
import Foundation
import Testing
import TetherTestServer

/// Tether's test server against a client it did not write: Python's `websockets` (`peer.py client`), asserted
/// on what the Python client reports and on what the server recorded.
// Enabled only when scripts/interop.sh has set up Python's websockets: a plain `swift test` needs no PyPI
// packages, and reports these as skipped rather than passing without a peer.
@Suite(.serialized, .enabled(if: PythonPeer.isConfigured, PythonPeer.notConfigured))
struct TestServerInteropTests {
    @Test func pythonClientCompletesTheHandshakeAndGetsEveryMessageBackByteIdentical() async throws {
        try await withTestServer(.echo) { server in
            let echoes = InteropPayload.sizes.flatMap { ["text:\($0)", "binary:\($0)"] }
            let report = try await PythonPeer.client(
                server.url(path: "/interop"), echoes.flatMap { ["--echo", $0] })
            #expect(report.error == nil)
            let expected = InteropPayload.sizes.flatMap { size in
                ["text", "binary"].map { PeerReport.Echo(kind: $0, size: size, identical: true) }
            }
            #expect(report.echoes == expected)
            // websockets offers permessage-deflate by default; the server, which has no compression, declines.
            #expect(report.extensions == [])
            let record = try await server.waitForEnd(ofConnection: 1)
            #expect(record.request?.path == "/interop")
            #expect(record.request?.header("Sec-WebSocket-Extensions")?.contains("permessage-deflate") == true)
            #expect(record.handshake == .accepted(subprotocol: nil))
            #expect(record.messages.map { "\($0.kind):\($0.size)" } == echoes)
            #expect(record.sentMessageCount == echoes.count)
            #expect(record.closeReceived?.code == 1000 && record.closeReceived?.reason == "done")
            #expect(record.end?.reason == .closeHandshakeCompleted(initiatedByServer: false))
        }
    }

    @Test(arguments: [false, true])
    func pythonClientCompressesWithTheDeflatingServerWithAndWithoutContextTakeover(
        noContextTakeover: Bool
    ) async throws {
        try await withTestServer(.echo.deflating()) { server in
            let echoes = InteropPayload.sizes.flatMap { ["text:\($0)", "binary:\($0)"] }
            let report = try await PythonPeer.client(
                server.url(path: "/interop"),
                echoes.flatMap { ["--echo", $0] } + (noContextTakeover ? ["--no-context-takeover"] : []))
            #expect(report.error == nil)
            #expect(report.extensions == ["permessage-deflate"])
            let expected = InteropPayload.sizes.flatMap { size in
                ["text", "binary"].map { PeerReport.Echo(kind: $0, size: size, identical: true) }
            }
            #expect(report.echoes == expected)
            let record = try await server.waitForEnd(ofConnection: 1)
            #expect(record.compression?.serverNoContextTakeover == noContextTakeover)
            #expect(record.compression?.clientNoContextTakeover == noContextTakeover)
            #expect(record.messages.map { "\($0.kind):\($0.size)" } == echoes)
        }
    }

    @Test func pythonClientGetsTheSubprotocolItOffered() async throws {
        try await withTestServer(.echo.selecting(subprotocol: "tether.v1")) { server in
            let report = try await PythonPeer.client(server.url(path: "/feed"), ["--subprotocol", "tether.v1"])
            #expect(report.error == nil)
            #expect(report.subprotocol == "tether.v1")
            let record = try await server.waitForEnd(ofConnection: 1)
            #expect(record.request?.subprotocols == ["tether.v1"])
            #expect(record.handshake == .accepted(subprotocol: "tether.v1"))
        }
    }

    @Test func pingsAreAnsweredBothWays() async throws {
        // The server pings every 20 ms; the Python client pings three times, then leaves once it has been
        // pinged three times (websockets answers a ping as it reads it, before the application sees it).
        try await withTestServer(.echo.pinging(everyMilliseconds: 20)) { server in
            let report = try await PythonPeer.client(server.url(path: "/feed"), ["--ping", "3", "--await-pings", "3"])
            #expect(report.error == nil)
            #expect(report.pongs == 3)
            #expect((report.pingsAnswered ?? 0) >= 3)
            let record = try await server.waitForEnd(ofConnection: 1)
            // The server's pings: every pong carries the payload of the ping it answers, in order.
            #expect(record.pongsReceived.count >= 3)
            let answered = record.pingsSent.prefix(record.pongsReceived.count).map(\.payload)
            #expect(record.pongsReceived.map(\.payload) == answered)
            // The client's pings: each answered with its own payload.
            #expect(record.pingsReceived.count == 3)
            #expect(record.pongsSent.map(\.payload) == record.pingsReceived.map(\.payload))
            #expect(record.end?.reason == .closeHandshakeCompleted(initiatedByServer: false))
        }
    }

    @Test(arguments: [UInt16(1000), 1001, 1011, 4000])
    func serverCloseReachesThePythonClientWithCodeAndReason(code: UInt16) async throws {
        let reason = "interop \(code) ✓"
        try await withTestServer(.close(afterMilliseconds: 0, code: code, reason: reason)) { server in
            let report = try await PythonPeer.client(server.url(path: "/feed"), ["--await-close"])
            #expect(report.error == nil)
            #expect(report.close == PeerReport.Close(code: Int(code), reason: reason))
            let record = try await server.waitForEnd(ofConnection: 1)
            #expect(record.closeSent?.code == code && record.closeSent?.reason == reason)
            // websockets answers with the code it received, as RFC 6455 §5.5.1 suggests.
            #expect(record.closeReceived?.code == code)
            #expect(record.end?.reason == .closeHandshakeCompleted(initiatedByServer: true))
        }
    }

    /// Runs `body` with a server applying `scenario` to every connection, and stops the server afterwards,
    /// also when `body` throws.
    private func withTestServer(_ scenario: Scenario, _ body: (TestServer) async throws -> Void) async throws {
        let server = try TestServer(scenario: scenario)
        do {
            try await body(server)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }
}
#endif
