import Testing
import TetherTestServer

/// Tokens that expire after a number of upgrades, or once a newer one came: the server's side of a client that
/// refreshes its credentials.
@Suite struct ExpiringTokensTests {
    static func request(_ token: String?, index: Int = 1) -> ConnectionContext {
        ConnectionContext(
            index: index, target: "/feed",
            headers: token.map { [HeaderField(name: "authorization", value: $0)] } ?? [], subprotocols: [])
    }

    @Test func aTokenIsGoodForItsUsesThenRefusedWith401() throws {
        let tokens = try ExpiringTokens(uses: 2)
        let accepted = Scenario.echo
        #expect(tokens.scenario(for: Self.request("Bearer a"), accepting: accepted) == accepted)
        #expect(tokens.scenario(for: Self.request("Bearer a"), accepting: accepted) == accepted)
        #expect(tokens.scenario(for: Self.request("Bearer a"), accepting: accepted) == .reject(status: 401))
        #expect(tokens.scenario(for: Self.request("Bearer b"), accepting: accepted) == accepted)
        #expect(tokens.accepted == 3 && tokens.refused == 1)
    }

    @Test func anOldTokenIsRefusedOnceANewerOneCameAndNoTokenIsRefused() throws {
        let tokens = try ExpiringTokens(header: "Authorization", uses: 5)
        #expect(tokens.scenario(for: Self.request("Bearer a"), accepting: .normal) == .normal)
        #expect(tokens.scenario(for: Self.request("Bearer b"), accepting: .normal) == .normal)
        #expect(tokens.scenario(for: Self.request("Bearer a"), accepting: .normal) == .reject(status: 401))
        #expect(tokens.scenario(for: Self.request(nil), accepting: .normal) == .reject(status: 401))
        #expect(tokens.scenario(for: Self.request(""), accepting: .normal) == .reject(status: 401))
        #expect(tokens.refused == 3)
    }

    @Test func anIssuedTokenIsTheNewestAndMakesEveryEarlierOneOld() throws {
        let tokens = try ExpiringTokens(uses: 9)
        let first = tokens.current
        #expect(first == "token-1" && tokens.current == first)
        #expect(tokens.scenario(for: Self.request(first), accepting: .normal) == .normal)
        let second = tokens.issue()
        #expect(second == "token-2" && tokens.current == second)
        #expect(tokens.scenario(for: Self.request(first), accepting: .normal) == .reject(status: 401))
        #expect(tokens.scenario(for: Self.request(second), accepting: .normal) == .normal)
    }

    @Test func aTokenGoodForNoUseIsRefusedAsAnArgument() {
        #expect(throws: TestServerError.self) { try ExpiringTokens(uses: 0) }
    }

    @Test func responseHeadersAreValidatedAndDescribedByNameOnly() throws {
        let scenario = Scenario.normal.addingResponseHeader(name: "X-Session", value: "s-1")
        try scenario.validate()
        #expect(scenario.responseHeaders == [HeaderField(name: "X-Session", value: "s-1")])
        #expect(scenario.description == "accept, headers X-Session")
        #expect(throws: TestServerError.self) {
            try Scenario.normal.addingResponseHeader(name: "Sec-WebSocket-Accept", value: "x").validate()
        }
        #expect(throws: TestServerError.self) {
            try Scenario.normal.addingResponseHeader(name: "X-A", value: "a\r\nb").validate()
        }
        #expect(throws: TestServerError.self) {
            try Scenario.normal.addingResponseHeader(name: "bad name", value: "a").validate()
        }
    }
}
