import Testing
@testable import TetherWire

/// The response headers an application asked for by name, and nothing else, kept from a successful upgrade; what a
/// `permessage-deflate` answer agrees, read on its own.
extension HandshakeResponseParserTests {
    @Test func onlyTheHeadersAskedForAreKeptInTheirOrderWithNamesAsSent() throws {
        var parser = HandshakeResponseParser(handshake: Self.handshake, keepingHeaders: ["set-cookie", "X-Session"])
        parser.append(Self.response(Self.valid + [
            "Set-Cookie: a=1", "X-Other: private", "x-session:  s-1 ", "SET-COOKIE: b=2",
        ]))
        let response = try #require(try parser.parse())
        #expect(response.headers.map(\.name) == ["Set-Cookie", "x-session", "SET-COOKIE"])
        #expect(response.headers.map(\.value) == ["a=1", "s-1", "b=2"])
        // Asked for none (the default): none kept.
        #expect(try self.parse(Self.response(Self.valid + ["Set-Cookie: a=1"])).map(\.headers.isEmpty) == true)
    }

    @Test func aDeflateAnswerReadOnItsOwnTakesFifteenForAWindowItDoesNotName() {
        #expect(PerMessageDeflate.agreement(in: ["permessage-deflate; server_no_context_takeover"])
            == PerMessageDeflateParameters(serverNoContextTakeover: true))
        #expect(PerMessageDeflate.agreement(in: ["x-other", "permessage-deflate; client_max_window_bits=10"])
            == PerMessageDeflateParameters(clientMaxWindowBits: 10))
        #expect(PerMessageDeflate.agreement(in: ["x-other"]) == nil)
        #expect(PerMessageDeflate.agreement(in: ["permessage-deflate; server_max_window_bits=99"]) == nil)
        #expect(ExtensionElement.list("permessage-deflate; a=\"x,y\", other").map(\.name)
            == ["permessage-deflate", "other"])
    }
}
