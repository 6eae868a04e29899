#if os(Linux)
import Foundation
import Testing
import Tether
import TetherTesting
import TetherTestServer

/// Both directions against a second peer Tether did not write: Node's `ws` (`scripts/interop/ws-peer.cjs`), plain
/// and with permessage-deflate, with and without context takeover.
// Enabled only when scripts/interop.sh has found Node and `ws`: a plain `swift test` needs neither.
@Suite(.serialized, .enabled(if: PythonPeer.nodeIsConfigured, PythonPeer.nodeNotConfigured))
struct NodeInteropTests {
    enum Compression: String, CaseIterable, Sendable {
        case off, takeover, noContextTakeover

        var peerArguments: [String] {
            switch self {
            case .off: []
            case .takeover: ["--deflate"]
            case .noContextTakeover: ["--deflate", "--no-context-takeover"]
            }
        }
    }

    /// Up to 1 MiB: the frame-length encodings' edges and one large message, both kinds.
    static let sizes = InteropPayload.sizes.filter { $0 <= 1 << 20 }

    @Test(arguments: Compression.allCases)
    func theClientsMessagesComeBackByteIdenticalFromWs(compression: Compression) async throws {
        let (peer, port) = try await PythonPeer.server(compression.peerArguments, runtime: .node)
        defer { peer.stop() }
        var configuration = WebSocketConfiguration(
            url: try #require(URL(string: "ws://127.0.0.1:\(port)/")), heartbeatInterval: .milliseconds(100),
            heartbeatTimeout: .seconds(5), pathMonitoring: .none)
        configuration.compression = .standard  // ws-peer.cjs without --deflate declines it
        let client = try WebSocketClient(configuration: configuration, randomSeed: 1)
        let recorder = EventRecorder(client.events)
        await client.start()
        // ws-peer.cjs says first what it answered.
        let answer = await recorder.message()
        switch compression {
        case .off:
            #expect(answer == .text("none"))
        case .takeover:
            #expect(answer == .text("permessage-deflate"))  // ws answers no client_max_window_bits: 15 applies
        case .noContextTakeover:
            #expect(answer == .text("permessage-deflate; server_no_context_takeover; client_no_context_takeover"))
        }
        for size in Self.sizes {
            for sent in [WebSocketMessage.text(InteropPayload.text(bytes: size)),
                         .binary(InteropPayload.binary(bytes: size))] {
                try await client.send(sent)
                let echoed = await recorder.message(timeout: .seconds(30))
                let identical = echoed == sent
                #expect(identical, "\(size) B came back as \(echoed.map { "\($0)".prefix(80) } ?? "nothing")")
            }
        }
        let pong = await recorder.record(.pong)
        #expect(pong != nil, "ws answers the heartbeat")
        #expect(recorder.records.filter { $0.kind == .closed }.isEmpty)
        await client.stop()
    }

    @Test(arguments: Compression.allCases)
    func wsGetsEveryMessageBackByteIdenticalFromTheTestServer(compression: Compression) async throws {
        let server = try TestServer(scenario: compression == .off ? .echo : Scenario.echo.deflating())
        let echoes = Self.sizes.flatMap { ["text:\($0)", "binary:\($0)"] }
        let report: PeerReport
        do {
            report = try await PythonPeer.client(
                server.url(path: "/interop"), compression.peerArguments + echoes.flatMap { ["--echo", $0] },
                runtime: .node)
        } catch {
            await server.stop()
            throw error
        }
        #expect(report.error == nil)
        #expect(report.extensions == (compression == .off ? [] : ["permessage-deflate"]))
        #expect(report.echoes == Self.sizes.flatMap { size in
            ["text", "binary"].map { PeerReport.Echo(kind: $0, size: size, identical: true) }
        })
        let record = try await server.waitForEnd(ofConnection: 1)
        let agreed = record.compression
        #expect((agreed == nil) == (compression == .off))
        #expect(agreed.map { [$0.serverNoContextTakeover, $0.clientNoContextTakeover] }
            == (compression == .off ? nil : Array(repeating: compression == .noContextTakeover, count: 2)))
        #expect(record.messages.map { "\($0.kind):\($0.size)" } == echoes)
        #expect(record.messages.allSatisfy { $0.compressed == (compression != .off) })
        await server.stop()
    }
}
#endif
