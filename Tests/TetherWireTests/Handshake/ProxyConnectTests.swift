import Testing
@testable import TetherWire

@Suite struct ProxyConnectTests {
    @Test func theRequestNamesTheOriginAndCarriesBasicCredentialsOnlyWhenGiven() {
        #expect(String(decoding: ProxyConnect.request(host: "example.com", port: 443, credentials: nil), as: UTF8.self)
            == "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n")
        let withCredentials = ProxyConnect.request(host: "::1", port: 8080, credentials: (user: "a", password: "b:c"))
        #expect(String(decoding: withCredentials, as: UTF8.self)
            == "CONNECT [::1]:8080 HTTP/1.1\r\nHost: [::1]:8080\r\nProxy-Authorization: Basic YTpiOmM=\r\n\r\n")
    }

    @Test func anAnswerParsesAtEverySplitAndA2xxOpensTheTunnel() throws {
        let answer = Array("HTTP/1.0 200 Connection established\r\nProxy-agent: tinyproxy\r\n\r\n".utf8)
        for split in 0...answer.count {
            var parser = ProxyConnectResponseParser()
            parser.append(answer[..<split])
            let early = try parser.parse()
            if split < answer.count { #expect(early == nil) }
            parser.append(answer[split...])
            let late = try parser.parse()
            let response = try #require(early ?? late)
            #expect(response.status == 200 && response.opensTunnel && response.remaining.isEmpty)
        }
    }

    @Test func aRefusalKeepsItsStatusAndRetryAfter() throws {
        var parser = ProxyConnectResponseParser()
        parser.append(Array("HTTP/1.1 407 Proxy Authentication Required\r\nRetry-After: 7\r\n\r\nbody".utf8))
        let response = try #require(try parser.parse())
        #expect(response.status == 407 && !response.opensTunnel)
        #expect(response.retryAfter == .seconds(7))
        #expect(response.remaining == Array("body".utf8))
    }

    @Test func somethingThatIsNotHTTPThrows() {
        var parser = ProxyConnectResponseParser()
        parser.append(Array("SSH-2.0-OpenSSH_9.2\r\n\r\n".utf8))
        #expect(throws: HandshakeError.self) { try parser.parse() }
    }
}
