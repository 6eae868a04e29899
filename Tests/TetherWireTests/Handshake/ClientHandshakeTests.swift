import Testing
@testable import TetherWire

@Suite struct ClientHandshakeTests {
    static let sampleKey = Base64.decode("dGhlIHNhbXBsZSBub25jZQ==")!

    func requestText(_ handshake: ClientHandshake) -> String { String(decoding: handshake.request, as: UTF8.self) }

    @Test func requestCarriesRFCSampleKeyAndExpectsRFCSampleAccept() throws {
        let handshake = try ClientHandshake(
            host: "server.example.com", port: nil, secure: false, target: "/chat", subprotocols: ["chat", "superchat"],
            headers: [(name: "Origin", value: "http://example.com")], key: Self.sampleKey)
        #expect(self.requestText(handshake) == """
            GET /chat HTTP/1.1\r
            Host: server.example.com\r
            Upgrade: websocket\r
            Connection: Upgrade\r
            Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r
            Sec-WebSocket-Version: 13\r
            Sec-WebSocket-Protocol: chat, superchat\r
            Origin: http://example.com\r
            \r

            """)
        #expect(handshake.expectedAccept == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }

    @Test func hostCarriesThePortOnlyWhenItIsNotTheSchemeDefault() throws {
        func host(_ port: Int?, secure: Bool, host: String = "h.example") throws -> String? {
            let text = self.requestText(try ClientHandshake(
                host: host, port: port, secure: secure, target: "/", key: Self.sampleKey))
            return text.split(separator: "\r\n").first { $0.hasPrefix("Host: ") }.map { String($0.dropFirst(6)) }
        }
        #expect(try host(80, secure: false) == "h.example")
        #expect(try host(443, secure: true) == "h.example")
        #expect(try host(443, secure: false) == "h.example:443")
        #expect(try host(80, secure: true) == "h.example:80")
        #expect(try host(8080, secure: false) == "h.example:8080")
        #expect(try host(9000, secure: false, host: "::1") == "[::1]:9000")
    }

    @Test func invalidArgumentsAreUsageErrors() {
        #expect(throws: WireUsageError.invalidKeyLength(15)) {
            try ClientHandshake(
                host: "h", port: nil, secure: false, target: "/", key: [UInt8](repeating: 0, count: 15))
        }
        #expect(throws: WireUsageError.invalidHandshakeField("host")) {
            try ClientHandshake(host: "h\r\nX: y", port: nil, secure: false, target: "/", key: Self.sampleKey)
        }
        #expect(throws: WireUsageError.invalidHandshakeField("port")) {
            try ClientHandshake(host: "h", port: 70000, secure: false, target: "/", key: Self.sampleKey)
        }
        #expect(throws: WireUsageError.invalidHandshakeField("target")) {
            try ClientHandshake(host: "h", port: nil, secure: false, target: "/a b", key: Self.sampleKey)
        }
        #expect(throws: WireUsageError.invalidHandshakeField("subprotocols")) {
            try ClientHandshake(host: "h", port: nil, secure: false, target: "/", subprotocols: ["a b"],
                                key: Self.sampleKey)
        }
        #expect(throws: WireUsageError.reservedHeader("Sec-WebSocket-Key")) {
            try ClientHandshake(host: "h", port: nil, secure: false, target: "/",
                                headers: [(name: "Sec-WebSocket-Key", value: "x")], key: Self.sampleKey)
        }
        #expect(throws: WireUsageError.invalidHandshakeField("value of header Authorization")) {
            try ClientHandshake(host: "h", port: nil, secure: false, target: "/",
                                headers: [(name: "Authorization", value: "Bearer x\r\nEvil: 1")], key: Self.sampleKey)
        }
    }

    @Test func randomKeyIs16BytesFromTheGenerator() {
        var first = SeededRandom(seed: 1)
        var second = SeededRandom(seed: 1)
        let key = ClientHandshake.randomKey(using: &first)
        #expect(key.count == 16)
        #expect(key == ClientHandshake.randomKey(using: &second))
        #expect(key != ClientHandshake.randomKey(using: &first))
    }
}

extension ClientHandshakeTests {
    @Test func tokenPunctuationIsAllowedInSubprotocolsAndHeaderNamesButSeparatorsAreNot() throws {
        let allowed = "!#$%&'*+-.^_`|~az09"
        let handshake = try ClientHandshake(
            host: "h", port: nil, secure: false, target: "/", subprotocols: [allowed],
            headers: [(name: allowed, value: "v")], key: Self.sampleKey)
        #expect(self.requestText(handshake).contains("Sec-WebSocket-Protocol: \(allowed)\r\n"))
        for separator in ["(", ")", ",", "/", ":", ";", "<", "=", ">", "?", "@", "[", "\\", "]", "{", "}", "\""] {
            #expect(throws: WireUsageError.invalidHandshakeField("subprotocols")) {
                try ClientHandshake(host: "h", port: nil, secure: false, target: "/", subprotocols: ["a\(separator)b"],
                                    key: Self.sampleKey)
            }
        }
    }
}
