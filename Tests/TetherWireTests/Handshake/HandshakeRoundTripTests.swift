import Testing
import TetherWire

@Suite struct HandshakeRoundTripTests {
    @Test func clientRequestAcceptedByServerYieldsValidatedResponseWithFrameBytesKept() throws {
        var random = SeededRandom(seed: 1)
        let client = try ClientHandshake(
            host: "example.com", port: 8080, secure: false, target: "/chat?room=1", subprotocols: ["v2", "v1"],
            key: ClientHandshake.randomKey(using: &random))
        var server = HandshakeRequestParser()
        server.append(client.request + [0x81, 0x80])
        let request = try #require(try server.parse())
        #expect(request.method == "GET")
        #expect(request.target == "/chat?room=1")
        #expect(request.header("host") == "example.com:8080")
        #expect(request.subprotocols == ["v2", "v1"])
        #expect(request.remaining == [0x81, 0x80])

        var response = HandshakeResponseParser(handshake: client)
        response.append(ServerHandshake.accept(request, subprotocol: "v1") + [0x81, 0x00])
        let accepted = try #require(try response.parse())
        #expect(accepted.subprotocol == "v1")
        #expect(accepted.remaining == [0x81, 0x00])
    }
}
