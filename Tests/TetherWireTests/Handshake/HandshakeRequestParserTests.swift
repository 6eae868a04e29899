import Testing
@testable import TetherWire

@Suite struct HandshakeRequestParserTests {
    static let valid = [
        "GET /chat?x=1 HTTP/1.1", "Host: server.example.com", "Upgrade: websocket", "Connection: Upgrade",
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version: 13",
    ]

    static func request(_ lines: [String]) -> [UInt8] {
        Array((lines.map { $0 + "\r\n" }.joined() + "\r\n").utf8)
    }

    func parse(_ bytes: [UInt8], limit: Int = 16 << 10) throws(HandshakeError) -> HandshakeRequest? {
        var parser = HandshakeRequestParser(maximumHeaderSize: limit)
        parser.append(bytes)
        return try parser.parse()
    }

    func replacing(_ prefix: String, with line: String?) -> [String] {
        Self.valid.compactMap { $0.hasPrefix(prefix) ? line : $0 }
    }

    @Test func rfcSampleRequestParsesWithSubprotocolsHeadersAndRemainingBytes() throws {
        let request = try #require(try self.parse(
            Self.request(Self.valid + ["Sec-WebSocket-Protocol: chat, superchat", "Origin: http://example.com"])
                + [0x81, 0x80]))
        #expect(request.method == "GET")
        #expect(request.target == "/chat?x=1")
        #expect(request.key == "dGhlIHNhbXBsZSBub25jZQ==")
        #expect(request.subprotocols == ["chat", "superchat"])
        #expect(request.header("origin") == "http://example.com")
        #expect(request.header("ORIGIN") == "http://example.com")
        #expect(request.header("Cookie") == nil)
        #expect(request.headers.count == 7)
        #expect(request.remaining == [0x81, 0x80])
    }

    @Test func tokensAreCaseInsensitive() throws {
        let lines = self.replacing("Upgrade", with: "upgrade: WEBSOCKET")
            .map { $0.hasPrefix("Connection") ? "CONNECTION: keep-alive, upgrade" : $0 }
        #expect(try self.parse(Self.request(lines)) != nil)
    }

    @Test func missingOrWrongUpgradeFieldsAreInvalidUpgrade() {
        let cases: [([String], String)] = [
            (self.replacing("GET", with: "POST /chat HTTP/1.1"), "method must be GET"),
            (self.replacing("GET", with: "GET /chat HTTP/1.0"), "HTTP version must be 1.1"),
            (self.replacing("Host", with: nil), "Host missing or repeated"),
            (self.replacing("Upgrade", with: nil), "Upgrade header missing or not websocket"),
            (self.replacing("Connection", with: "Connection: keep-alive"),
             "Connection header missing or without upgrade"),
            (self.replacing("Sec-WebSocket-Version", with: "Sec-WebSocket-Version: 8"),
             "Sec-WebSocket-Version must be 13"),
            (self.replacing("Sec-WebSocket-Key", with: "Sec-WebSocket-Key: c2hvcnQ="),
             "Sec-WebSocket-Key missing or not 16 bytes in base64"),
            (self.replacing("Sec-WebSocket-Key", with: nil), "Sec-WebSocket-Key missing or not 16 bytes in base64"),
        ]
        for (lines, reason) in cases {
            #expect(throws: HandshakeError.invalidUpgrade(reason)) { try self.parse(Self.request(lines)) }
        }
    }

    @Test func malformedRequestLinesAreMalformed() {
        #expect(throws: HandshakeError.malformed("invalid request line")) {
            try self.parse(Self.request(self.replacing("GET", with: "GET /a b HTTP/1.1")))
        }
        #expect(throws: HandshakeError.malformed("invalid HTTP version")) {
            try self.parse(Self.request(self.replacing("GET", with: "GET / HTTP/one")))
        }
        #expect(throws: HandshakeError.malformed("control character in a header value")) {
            try self.parse(Self.request(Self.valid + ["X-A: a\u{1}b"]))
        }
    }

    @Test func requestBeyondTheLimitIsHeaderTooLargeAndTheDefaultIs16KiB() {
        #expect(throws: HandshakeError.headerTooLarge(limit: 100)) {
            try self.parse(Self.request(Self.valid), limit: 100)
        }
        let large = Self.request(Self.valid + ["Cookie: " + String(repeating: "c", count: 16 << 10)])
        #expect(throws: HandshakeError.headerTooLarge(limit: 16384)) { try self.parse(large) }
    }

    @Test func splitAtEveryPositionParsesTheSameRequest() throws {
        let bytes = Self.request(Self.valid) + [1, 2, 3]
        for split in 0...bytes.count {
            var parser = HandshakeRequestParser()
            parser.append(bytes[..<split])
            let early = try parser.parse()
            if split < bytes.count - 3 { #expect(early == nil, "split \(split)") }
            parser.append(bytes[split...])
            #expect(try parser.parse()?.remaining == [1, 2, 3], "split \(split)")
        }
    }
}
