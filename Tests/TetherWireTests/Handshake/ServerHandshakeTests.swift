import Testing
@testable import TetherWire

@Suite struct ServerHandshakeTests {
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

    func parse(_ bytes: [UInt8]) throws(HandshakeError) -> HandshakeRequest? {
        var parser = HandshakeRequestParser()
        parser.append(bytes)
        return try parser.parse()
    }

    @Test func acceptResponseCarriesRFCSampleAccept() throws {
        let request = try #require(
            try self.parse(HandshakeRequestParserTests.request(HandshakeRequestParserTests.valid)))
        let response = String(decoding: ServerHandshake.accept(request, subprotocol: "chat"), as: UTF8.self)
        #expect(response == """
            HTTP/1.1 101 Switching Protocols\r
            Upgrade: websocket\r
            Connection: Upgrade\r
            Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r
            Sec-WebSocket-Protocol: chat\r
            \r

            """)
    }

    @Test func rejectResponseCarriesStatusRetryAfterAndParsesBackOnTheClient() throws {
        let bytes = ServerHandshake.reject(status: 503, reason: "Busy\r\nInjected: 1", retryAfterSeconds: 30)
        #expect(String(decoding: bytes, as: UTF8.self) == """
            HTTP/1.1 503 Busy  Injected: 1\r
            Connection: close\r
            Content-Length: 0\r
            Retry-After: 30\r
            \r

            """)
        var parser = HandshakeResponseParser(handshake: HandshakeResponseParserTests.handshake)
        parser.append(bytes)
        #expect(throws: HandshakeError.rejected(status: 503, retryAfter: .seconds(30))) { try parser.parse() }
    }

    @Test func upgradeRequiredRejectionAdvertisesVersion13() {
        let text = String(decoding: ServerHandshake.reject(status: 426, reason: "Upgrade Required"), as: UTF8.self)
        #expect(text.contains("\r\nSec-WebSocket-Version: 13\r\n"))
        #expect(!text.contains("Retry-After"))
    }

    @Test func acceptAddsExtraHeadersButDropsOnesWithLineBreaks() throws {
        let request = try #require(
            try self.parse(HandshakeRequestParserTests.request(HandshakeRequestParserTests.valid)))
        let text = String(decoding: ServerHandshake.accept(
            request, headers: [(name: "X-Server", value: "tether"), (name: "X-Bad", value: "a\r\nInjected: 1")]),
            as: UTF8.self)
        #expect(text.contains("\r\nX-Server: tether\r\n"))
        #expect(!text.contains("Injected"))
    }
}
