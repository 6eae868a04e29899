import Testing
import TetherWire

@Suite struct HandshakeResponseParserTests {
    static let handshake = try! ClientHandshake(
        host: "server.example.com", port: nil, secure: false, target: "/chat", subprotocols: ["chat", "superchat"],
        headers: [(name: "Sec-WebSocket-Extensions", value: "permessage-deflate; client_max_window_bits")],
        key: ClientHandshakeTests.sampleKey)

    static func response(_ lines: [String]) -> [UInt8] {
        Array((lines.map { $0 + "\r\n" }.joined() + "\r\n").utf8)
    }

    static let valid = [
        "HTTP/1.1 101 Switching Protocols", "Upgrade: websocket", "Connection: Upgrade",
        "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=",
    ]

    func parse(_ bytes: [UInt8], limit: Int = 16 << 10) throws(HandshakeError) -> HandshakeResponse? {
        var parser = HandshakeResponseParser(handshake: Self.handshake, maximumHeaderSize: limit)
        parser.append(bytes)
        return try parser.parse()
    }

    @Test func rfcSampleResponseIsAcceptedAndFrameBytesAfterItAreKept() throws {
        let response = try #require(try self.parse(Self.response(Self.valid + ["Sec-WebSocket-Protocol: chat"])
            + hex("81 05 48 65 6c 6c 6f")))
        #expect(response.subprotocol == "chat")
        #expect(response.extensions.isEmpty)
        #expect(response.remaining == hex("81 05 48 65 6c 6c 6f"))
    }

    @Test func byteAtATimeNeedsMoreUntilTheBlankLine() throws {
        let bytes = Self.response(Self.valid) + [0x89]
        var parser = HandshakeResponseParser(handshake: Self.handshake)
        for (index, byte) in bytes.enumerated() {
            parser.append([byte])
            let result = try parser.parse()
            #expect((result != nil) == (index >= bytes.count - 2), "byte \(index)")
        }
        #expect(try parser.parse()?.remaining == [0x89])
    }

    @Test func headerNamesAndTokensAreCaseInsensitiveAndListsAreSplit() throws {
        let response = try self.parse(Self.response([
            "HTTP/1.1 101 Switching Protocols", "UPGRADE: WebSocket", "connection: keep-alive, UPGRADE",
            "sec-websocket-accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=", "Sec-WebSocket-Extensions: Permessage-Deflate",
        ]))
        #expect(response?.extensions == ["Permessage-Deflate"])
    }

    @Test func bareLineFeedsAreAccepted() throws {
        let text = Self.valid.map { $0 + "\n" }.joined() + "\n"
        #expect(try self.parse(Array(text.utf8)) != nil)
    }

    @Test func nonSwitchingStatusIsRejectedWithRetryAfterSeconds() {
        #expect(throws: HandshakeError.rejected(status: 503, retryAfterSeconds: 120)) {
            try self.parse(Self.response(["HTTP/1.1 503 Service Unavailable", "Retry-After: 120"]))
        }
        #expect(throws: HandshakeError.rejected(status: 429, retryAfterSeconds: nil)) {
            try self.parse(Self.response(["HTTP/1.1 429 Too Many Requests",
                                          "Retry-After: Wed, 21 Oct 2015 07:28:00 GMT"]))
        }
        #expect(throws: HandshakeError.rejected(status: 401, retryAfterSeconds: nil)) {
            try self.parse(Self.response(["HTTP/1.1 401 Unauthorized"]))
        }
        #expect(throws: HandshakeError.rejected(status: 200, retryAfterSeconds: nil)) {
            try self.parse(Self.response(["HTTP/1.0 200"]))
        }
    }

    @Test func wrongAcceptIsInvalidUpgradeWithoutEchoingTheValue() {
        let lines = Self.valid.dropLast() + ["Sec-WebSocket-Accept: c2VjcmV0LXRva2VuLXZhbHVl"]
        let failure = #expect(throws: HandshakeError.self) { try self.parse(Self.response(Array(lines))) }
        #expect(failure == .invalidUpgrade("Sec-WebSocket-Accept does not match the key"))
    }

    @Test func missingUpgradeConnectionOrAcceptIsInvalidUpgrade() {
        for missing in 1..<Self.valid.count {
            var lines = Self.valid
            lines.remove(at: missing)
            let failure = #expect(throws: HandshakeError.self) { try self.parse(Self.response(lines)) }
            if case .invalidUpgrade = failure {} else {
                Issue.record("line \(missing): \(String(describing: failure))")
            }
        }
        #expect(throws: HandshakeError.invalidUpgrade("Upgrade header missing or not websocket")) {
            try self.parse(Self.response(["HTTP/1.1 101 OK", "Upgrade: h2c", "Connection: Upgrade",
                                          "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo="]))
        }
    }

    @Test func subprotocolOrExtensionNotOfferedIsInvalidUpgrade() {
        #expect(throws: HandshakeError.invalidUpgrade("subprotocol not offered")) {
            try self.parse(Self.response(Self.valid + ["Sec-WebSocket-Protocol: other"]))
        }
        #expect(throws: HandshakeError.invalidUpgrade("more than one subprotocol selected")) {
            try self.parse(Self.response(Self.valid + ["Sec-WebSocket-Protocol: chat, superchat"]))
        }
        #expect(throws: HandshakeError.invalidUpgrade("extension not offered")) {
            try self.parse(Self.response(Self.valid + ["Sec-WebSocket-Extensions: x-webkit-deflate-frame"]))
        }
    }

    @Test func headerBlockBeyondTheLimitIsHeaderTooLarge() {
        let bytes = Self.response(Self.valid + ["X-Padding: " + String(repeating: "p", count: 300)])
        #expect(throws: HandshakeError.headerTooLarge(limit: 256)) { try self.parse(bytes, limit: 256) }
        #expect(throws: HandshakeError.headerTooLarge(limit: 256)) {
            try self.parse([UInt8](repeating: UInt8(ascii: "a"), count: 256), limit: 256)
        }
        #expect(try! self.parse(bytes, limit: bytes.count) != nil)
        #expect(throws: HandshakeError.headerTooLarge(limit: bytes.count - 1)) {
            try self.parse(bytes, limit: bytes.count - 1)
        }
    }

    @Test func defaultLimitIs16KiB() {
        let bytes = Self.response(Self.valid + ["X-Padding: " + String(repeating: "p", count: 16 << 10)])
        #expect(throws: HandshakeError.headerTooLarge(limit: 16384)) { try self.parse(bytes) }
    }

    @Test func malformedHeadsAreMalformedAndTheErrorRepeats() {
        #expect(throws: HandshakeError.malformed("invalid status line")) { try self.parse(Self.response(["SSH-2.0"])) }
        #expect(throws: HandshakeError.malformed("header line without a colon")) {
            try self.parse(Self.response(Self.valid + ["no colon here"]))
        }
        #expect(throws: HandshakeError.malformed("obsolete header line folding")) {
            try self.parse(Self.response(Self.valid + [" folded"]))
        }
        #expect(throws: HandshakeError.malformed("invalid header name")) {
            try self.parse(Self.response(Self.valid + ["Bad Name: x"]))
        }
        var parser = HandshakeResponseParser(handshake: Self.handshake)
        parser.append(Self.response(["HTTP/1.1 1x1 Nope"]))
        #expect(throws: HandshakeError.malformed("invalid status code")) { try parser.parse() }
        parser.append(Self.response(Self.valid))
        #expect(throws: HandshakeError.malformed("invalid status code")) { try parser.parse() }
    }
}
