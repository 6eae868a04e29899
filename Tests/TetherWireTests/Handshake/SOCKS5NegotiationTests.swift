import Testing
@testable import TetherWire

/// The SOCKS5 client exchange (RFC 1928, RFC 1929) as byte transcripts, for any split of the proxy's answers.
@Suite struct SOCKS5NegotiationTests {
    @Test func withoutCredentialsOneMethodThenConnectByName() throws {
        var negotiation = try SOCKS5Negotiation(target: .name("example.com", port: 443), credentials: nil)
        #expect(negotiation.start() == [0x05, 0x01, 0x00])
        #expect(try negotiation.receive([0x05]) == .needMoreInput)
        let name = Array("example.com".utf8)
        #expect(try negotiation.receive([0x00]) == .send([0x05, 0x01, 0x00, 0x03, 11] + name + [0x01, 0xBB]))
        // The reply, one byte at a time, with a domain-name bound address; bytes after it are the origin's.
        let reply: [UInt8] = [0x05, 0x00, 0x00, 0x03, 3] + Array("abc".utf8) + [0x00, 0x50]
        for byte in reply.dropLast() { #expect(try negotiation.receive([byte]) == .needMoreInput) }
        #expect(try negotiation.receive([reply.last!, 0x48]) == .established(remaining: [0x48]))
    }

    @Test func withCredentialsUsernamePasswordAuthenticationThenConnectByAddress() throws {
        var negotiation = try SOCKS5Negotiation(
            target: .address([0x20, 0x01, 0x0d, 0xb8] + Array(repeating: 0, count: 11) + [1], port: 8080),
            credentials: (user: "u", password: "pw"))
        #expect(negotiation.start() == [0x05, 0x02, 0x00, 0x02])
        #expect(try negotiation.receive([0x05, 0x02]) == .send([0x01, 1, 0x75, 2, 0x70, 0x77]))
        let connect = try negotiation.receive([0x01, 0x00])
        let address: [UInt8] = [0x20, 0x01, 0x0d, 0xb8] + Array(repeating: 0, count: 11) + [1]
        #expect(connect == .send([0x05, 0x01, 0x00, 0x04] + address + [0x1F, 0x90]))
        let reply: [UInt8] = [0x05, 0x00, 0x00, 0x01, 10, 0, 0, 1, 0x04, 0x38]
        #expect(try negotiation.receive(reply) == .established(remaining: []))
    }

    @Test func aProxyThatSkipsAuthenticationOfferedIsAccepted() throws {
        var negotiation = try SOCKS5Negotiation(
            target: .address([127, 0, 0, 1], port: 80), credentials: (user: "u", password: ""))
        _ = negotiation.start()
        #expect(try negotiation.receive([0x05, 0x00]) == .send([0x05, 0x01, 0x00, 0x01, 127, 0, 0, 1, 0x00, 0x50]))
    }

    @Test func refusalsAreTyped() throws {
        func negotiate(_ answers: [[UInt8]], credentials: (user: String, password: String)? = nil) throws(SOCKS5Error) {
            var negotiation = try SOCKS5Negotiation(target: .name("h", port: 1), credentials: credentials)
            _ = negotiation.start()
            for answer in answers { _ = try negotiation.receive(answer) }
        }
        #expect(throws: SOCKS5Error.noAcceptableMethod) { try negotiate([[0x05, 0xFF]]) }
        #expect(throws: SOCKS5Error.authenticationFailed) {
            try negotiate([[0x05, 0x02], [0x01, 0x01]], credentials: (user: "u", password: "p"))
        }
        // The code alone decides, even before the bound address has arrived.
        #expect(throws: SOCKS5Error.rejected(.hostUnreachable)) { try negotiate([[0x05, 0x00], [0x05, 0x04]]) }
        #expect(throws: SOCKS5Error.rejected(SOCKS5Reply(code: 0x2A))) { try negotiate([[0x05, 0x00], [0x05, 0x2A]]) }
        #expect(throws: SOCKS5Error.malformed) { try negotiate([[0x04, 0x00]]) }
        #expect(throws: SOCKS5Error.malformed) { try negotiate([[0x05, 0x02]]) }  // a method not offered
        #expect(throws: SOCKS5Error.malformed) { try negotiate([[0x05, 0x00], [0x05, 0x00, 0x00, 0x09, 0]]) }
        #expect(SOCKS5Reply.connectionRefused.description == "connection refused")
    }

    @Test func whatSOCKS5CannotCarryIsRefusedBeforeAnyByte() {
        #expect(throws: SOCKS5Error.unusableRequest) {
            try SOCKS5Negotiation(target: .name(String(repeating: "a", count: 256), port: 80), credentials: nil)
        }
        #expect(throws: SOCKS5Error.unusableRequest) {
            try SOCKS5Negotiation(target: .name("h", port: 80), credentials: (user: "", password: "p"))
        }
        #expect(throws: SOCKS5Error.unusableRequest) {
            try SOCKS5Negotiation(target: .address([1, 2, 3], port: 80), credentials: nil)
        }
    }
}
