import Foundation
import Testing
@testable import Tether
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What the task's handshake agreed, read from its response when it opens: the subprotocol it reports, the
/// extensions of the response, and the headers the request names — only those.
extension URLSessionConnectionTests {
    @Test func theOpenReportsTheSubprotocolTheExtensionsAndOnlyTheHeadersAskedFor() async throws {
        let factory = ScriptedWebSocketTaskFactory()
        let transport = URLSessionTransport(factory: factory, clock: ContinuousClock())
        let connection = transport.connect(TransportRequest(
            url: URL(string: "wss://example.test/feed")!, subprotocols: ["chat"],
            responseHeaderNames: ["X-Session", "Set-Cookie"]))
        let task = factory.tasks[0]
        task.setResponse(status: 101, headers: [
            "Sec-WebSocket-Extensions": "permessage-deflate; server_max_window_bits=12", "X-Session": "s-1",
            "X-Other": "private",
        ])
        task.open(subprotocol: "chat")
        var iterator = connection.events.makeAsyncIterator()
        guard case .opened(let handshake)? = await iterator.next() else {
            Issue.record("no open")
            return
        }
        #expect(handshake.subprotocol == "chat")
        #expect(handshake.extensions == [WebSocketExtension(
            name: "permessage-deflate", parameters: [.init(name: "server_max_window_bits", value: "12")])])
        #expect(handshake.compression == PerMessageDeflateParameters(serverMaxWindowBits: 12))
        #expect(handshake.headers.map(\.name) == ["X-Session"])
        #expect(handshake.values(ofHeader: "x-session") == ["s-1"])
        connection.close(code: 1000, reason: "")
        task.complete(error: nil)
    }
}
