import Testing
@testable import TetherWire

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
        #expect(throws: HandshakeError.rejected(status: 503, retryAfter: .seconds(120))) {
            try self.parse(Self.response(["HTTP/1.1 503 Service Unavailable", "Retry-After: 120"]))
        }
        #expect(throws: HandshakeError.rejected(status: 401, retryAfter: nil)) {
            try self.parse(Self.response(["HTTP/1.1 401 Unauthorized"]))
        }
        #expect(throws: HandshakeError.rejected(status: 200, retryAfter: nil)) {
            try self.parse(Self.response(["HTTP/1.0 200"]))
        }
    }

    @Test(arguments: [301, 302, 303, 307, 308])
    func aRedirectCarriesItsLocationAsSent(status: Int) {
        #expect(throws: HandshakeError.redirected(status: status, location: "/next?token=t")) {
            try self.parse(
                Self.response(["HTTP/1.1 \(status) Moved", "Location:  /next?token=t ", "Content-Length: 0"]))
        }
        #expect(HandshakeError.redirected(status: status, location: "/next?token=t").detail == "redirect \(status)")
    }

    @Test func aRedirectWithoutOneLocationHasNoneAndOtherStatusesAreNoRedirect() {
        #expect(throws: HandshakeError.redirected(status: 302, location: nil)) {
            try self.parse(Self.response(["HTTP/1.1 302 Found"]))
        }
        #expect(throws: HandshakeError.redirected(status: 307, location: nil)) {
            try self.parse(Self.response(["HTTP/1.1 307 Temporary Redirect", "Location: /a", "Location: /b"]))
        }
        // 300 (a choice), 304 (not modified) and 305 (use proxy, deprecated) are not followed: rejections.
        for status in [300, 304, 305] {
            #expect(throws: HandshakeError.rejected(status: status, retryAfter: nil)) {
                try self.parse(Self.response(["HTTP/1.1 \(status) X", "Location: /a"]))
            }
        }
    }

    /// The `Retry-After` of a rejection with these extra header lines (nil: none understood).
    func retryAfter(_ headers: [String]) -> RetryAfter? {
        let failure = #expect(throws: HandshakeError.self) {
            try self.parse(Self.response(["HTTP/1.1 503 Service Unavailable"] + headers))
        }
        guard case .rejected(503, let retryAfter)? = failure else {
            Issue.record("not a 503 rejection: \(String(describing: failure))")
            return nil
        }
        return retryAfter
    }

    @Test func longAndHugeDelaySecondsAreTakenNotIgnored() {
        #expect(self.retryAfter(["Retry-After: 999999999"]) == .seconds(999_999_999))
        #expect(self.retryAfter(["Retry-After: 9999999999"]) == .seconds(9_999_999_999))
        #expect(self.retryAfter(["Retry-After: " + String(repeating: "9", count: 40)]) == .seconds(Int.max))
        #expect(self.retryAfter(["Retry-After:   42  "]) == .seconds(42))  // the field's whitespace is not its value
    }

    @Test func anHTTPDateIsMeasuredFromTheResponsesDateHeader() {
        let withDate = self.retryAfter([
            "Date: Sun, 06 Nov 1994 08:49:37 GMT", "Retry-After: Sun, 06 Nov 1994 08:51:37 GMT",
        ])
        #expect(withDate?.delaySeconds(now: 0) == 120)
        #expect(withDate?.delaySeconds(now: RetryAfterTests.now) == 120)
        let rfc850 = self.retryAfter(["Retry-After: Sunday, 06-Nov-94 08:50:37 GMT", "date: Sun Nov  6 08:49:37 1994"])
        #expect(rfc850?.delaySeconds(now: RetryAfterTests.now) == 60)
        // Without a Date header (or with two of them), from the caller's clock.
        let withoutDate = self.retryAfter(["Retry-After: Sun, 06 Nov 1994 08:51:37 GMT"])
        #expect(withoutDate?.delaySeconds(now: RetryAfterTests.example) == 120)
        let twoDates = self.retryAfter([
            "Date: Sun, 06 Nov 1994 08:49:37 GMT", "Date: Sun, 06 Nov 1994 08:50:37 GMT",
            "Retry-After: Sun, 06 Nov 1994 08:51:37 GMT",
        ])
        #expect(twoDates?.delaySeconds(now: RetryAfterTests.example + 7) == 113)
        // A date already past: no extra wait.
        #expect(self.retryAfter(["Retry-After: Wed, 21 Oct 2015 07:28:00 GMT"])?
            .delaySeconds(now: RetryAfterTests.now) == 0)
    }

    @Test func anInvalidOrRepeatedRetryAfterIsIgnored() {
        #expect(self.retryAfter(["Retry-After: soon"]) == nil)
        #expect(self.retryAfter(["Retry-After: -1"]) == nil)
        #expect(self.retryAfter(["Retry-After: 1.5"]) == nil)
        #expect(self.retryAfter(["Retry-After: Sun, 31 Nov 1994 08:49:37 GMT"]) == nil)
        #expect(self.retryAfter(["Retry-After:"]) == nil)
        #expect(self.retryAfter(["Retry-After: 5", "Retry-After: 6"]) == nil)
    }

    @Test func wrongAcceptIsInvalidUpgradeWithoutEchoingTheValue() {
        let lines = Self.valid.dropLast() + ["Sec-WebSocket-Accept: c2VjcmV0LXRva2VuLXZhbHVl"]
        let failure = #expect(throws: HandshakeError.self) { try self.parse(Self.response(Array(lines))) }
        #expect(failure == .invalidUpgrade("Sec-WebSocket-Accept does not match the key"))
        #expect(failure?.detail == "Sec-WebSocket-Accept does not match the key")
    }

    /// Responses that fail in every way the parser knows, each with a secret in the offending header's value (or
    /// the status line); the failure's detail, which reaches close records and `tether connect`, never holds it.
    static let secretBearingFailures: [[String]] = [
        Self.valid.dropLast() + ["Sec-WebSocket-Accept: SECRET-7f3a"],
        Self.valid + ["Sec-WebSocket-Accept: SECRET-7f3a"],
        Self.valid + ["Sec-WebSocket-Protocol: SECRET-7f3a"],
        Self.valid + ["Sec-WebSocket-Protocol: chat, SECRET-7f3a"],
        Self.valid + ["Sec-WebSocket-Extensions: SECRET-7f3a; token=SECRET-7f3a"],
        ["HTTP/1.1 101 Switching Protocols", "Upgrade: SECRET-7f3a", "Connection: Upgrade",
         "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo="],
        ["HTTP/1.1 101 Switching Protocols", "Upgrade: websocket", "Connection: SECRET-7f3a",
         "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo="],
        ["HTTP/1.0 101 SECRET-7f3a"] + Self.valid.dropFirst(),
        ["HTTP/1.1 1x1 SECRET-7f3a"],
        ["SECRET-7f3a"],
        Self.valid + ["SECRET-7f3a without a colon"],
        Self.valid + ["SECRET-7f3a Name: x"],
        Self.valid + [" SECRET-7f3a folded"],
        Self.valid + ["Authorization: Bearer SECRET-7f3a\u{1}"],
        ["HTTP/1.1 503 SECRET-7f3a", "Retry-After: SECRET-7f3a", "Date: SECRET-7f3a"],
    ]

    @Test(arguments: Self.secretBearingFailures)
    func noFailureDetailEchoesAHeaderValue(lines: [String]) {
        let failure = #expect(throws: HandshakeError.self) { try self.parse(Self.response(lines)) }
        #expect(failure?.detail.isEmpty == false)
        #expect(failure?.detail.contains("SECRET") == false, "\(String(describing: failure))")
        #expect(failure.map { String(describing: $0) }?.contains("SECRET") == false)
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
