#if os(Linux)
import Foundation
import Testing
@testable import Tether
import TetherTestServer
import TetherWire
import TetherTesting

/// What the opening handshake agreed reaches the app in the open state (`ConnectionState.handshake`): the
/// subprotocol, the extensions with permessage-deflate's windows, and the response headers asked for by name — only
/// those.
@Suite(.timeLimit(.minutes(1)))
struct WebSocketClientHandshakeTests {
    @Test func theSubprotocolTheExtensionsAndTheHeadersAskedForReachTheOpenState() async throws {
        let policy = PerMessageDeflateServerPolicy(serverNoContextTakeover: true, serverMaxWindowBits: 10)
        let scenario = Scenario.echo.selecting(subprotocol: "chat.v2").deflating(policy)
            .addingResponseHeader(name: "X-Session", value: "s-42")
            .addingResponseHeader(name: "Set-Cookie", value: "a=1")
            .addingResponseHeader(name: "set-cookie", value: "b=2")
            .addingResponseHeader(name: "X-Not-Asked", value: "private")
        let server = try TestServer(scenario: scenario)
        var configuration = WebSocketConfiguration(
            url: URL(string: server.url())!, subprotocols: ["chat.v1", "chat.v2"], heartbeatInterval: .seconds(60),
            pathMonitoring: .none)
        configuration.compression = .standard
        configuration.responseHeaderNames = ["x-session", "Set-Cookie"]
        let client = try WebSocketClient(configuration: configuration)
        let recorder = EventRecorder(client.events)
        await client.start()
        let open = try #require(await recorder.state(.open))
        let handshake = try #require(open.handshake)
        #expect(handshake.subprotocol == "chat.v2")
        #expect(handshake.compression == PerMessageDeflateParameters(
            serverNoContextTakeover: true, serverMaxWindowBits: 10, clientMaxWindowBits: 15))
        #expect(handshake.extensions.map(\.name) == ["permessage-deflate"])
        #expect(handshake.extensions.first?.parameters.contains(
            WebSocketExtension.Parameter(name: "server_max_window_bits", value: "10")) == true)
        #expect(handshake.headers.map(\.name) == ["X-Session", "Set-Cookie", "set-cookie"])
        #expect(handshake.values(ofHeader: "SET-COOKIE") == ["a=1", "b=2"])
        #expect(handshake.values(ofHeader: "X-Not-Asked").isEmpty)
        #expect(await client.state.handshake == handshake)
        // The values are the app's to read, and nobody else's to print.
        var dumped = ""
        dump(open, to: &dumped)
        for text in ["\(open)", String(reflecting: open), dumped, "\(handshake)"] {
            #expect(!text.contains("s-42") && !text.contains("a=1"), "\(text)")
        }
        #expect("\(handshake)".contains("headers [X-Session, Set-Cookie, set-cookie]"))
        await client.stop()
        #expect(await client.state.handshake == nil)  // only while open
        await server.stop()
    }

    @Test func withoutAnythingAgreedTheHandshakeIsEmptyButPresentWhileOpen() async throws {
        let server = try TestServer(scenario: .echo)
        let configuration = WebSocketConfiguration(
            url: URL(string: server.url())!, subprotocols: ["chat.v2"], heartbeatInterval: .seconds(60),
            pathMonitoring: .none)
        let client = try WebSocketClient(configuration: configuration)
        let recorder = EventRecorder(client.events)
        await client.start()
        let open = try #require(await recorder.state(.open))
        #expect(open.handshake == HandshakeResult())
        await client.stop()
        await server.stop()
    }
}
#endif
