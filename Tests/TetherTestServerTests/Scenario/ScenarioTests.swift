import Testing
import TetherTestServer

@Suite struct ScenarioTests {
    @Test func defaultScenarioAcceptsAndAnswersPingsAtOnce() {
        let scenario = Scenario()
        #expect(scenario == .normal)
        #expect(scenario.handshake == .accept && scenario.pong == .immediate)
        #expect(!scenario.echo && scenario.stream == nil && scenario.close == nil)
        #expect(scenario.description == "accept")
    }

    @Test func factoriesCombineWithModifiers() {
        let scenario = Scenario.send(count: 10_000, size: 32)
            .echoing()
            .delayingPongs(byMilliseconds: 200)
            .pinging(everyMilliseconds: 50)
            .closing(afterMilliseconds: 500, code: 1001, reason: "bye")
            .resetting(afterMilliseconds: 900)
            .selecting(subprotocol: "chat")
            .recordingPayloads()
        #expect(scenario.stream == Scenario.Stream(count: 10_000, size: 32, kind: .text, intervalMilliseconds: 0))
        #expect(scenario.echo && scenario.recordsPayloads)
        #expect(scenario.pong == .delayed(milliseconds: 200))
        #expect(scenario.pingIntervalMilliseconds == 50)
        #expect(scenario.close == Scenario.Close(afterMilliseconds: 500, code: 1001, reason: "bye"))
        #expect(scenario.resetAfterMilliseconds == 900)
        #expect(scenario.subprotocol == "chat")
        #expect(scenario.description == "accept, subprotocol chat, pong delayed 200 ms, echo, "
            + "send 10000 text x 32 B every 0 ms, ping every 50 ms, close 1001 after 500 ms, reset after 900 ms")
    }

    @Test func handshakeFactoriesSetOnlyTheHandshake() {
        #expect(Scenario.reject(status: 503, retryAfterSeconds: 2).handshake
            == .reject(status: 503, retryAfterSeconds: 2))
        #expect(Scenario.silentHandshake.handshake == .ignore)
        #expect(Scenario.noPong.pong == .never)
        #expect(Scenario.reject(status: 401).description == "reject 401")
    }

    @Test func validScenariosPassValidation() throws {
        for scenario in [
            Scenario.normal, .echo, .noPong, .silentHandshake, .reject(status: 429, retryAfterSeconds: 0),
            .close(afterMilliseconds: 0, code: 4999), .send(count: 0, size: 0), .serverPings(everyMilliseconds: 1),
        ] {
            try scenario.validate()
        }
    }

    @Test func outOfRangeValuesAreRefusedWithTheFieldNamed() {
        let cases: [(Scenario, String)] = [
            (.reject(status: 101), "reject status must be 200...999"),
            (.reject(status: 503, retryAfterSeconds: -1), "Retry-After must not be negative"),
            (.pongDelay(milliseconds: -5), "pong delay must not be negative"),
            (Scenario.normal.selecting(subprotocol: "a b"), "subprotocol must be an HTTP token"),
            (.send(count: -1, size: 3), "stream count and size must not be negative"),
            (.send(count: 1, size: 3, everyMilliseconds: -1), "stream interval must not be negative"),
            (.serverPings(everyMilliseconds: 0), "ping interval must be positive"),
            (.close(afterMilliseconds: 10, code: 1006), "close code 1006 may not be sent"),
            (.close(afterMilliseconds: 10, code: 1000, reason: String(repeating: "x", count: 124)),
                "close reason must fit in 123 bytes"),
            (.reset(afterMilliseconds: -1), "reset delay must not be negative"),
            (.broadcast(everyMilliseconds: 0), "broadcast interval must be positive"),
            (.broadcast(everyMilliseconds: 5, size: -1), "broadcast size must not be negative"),
        ]
        for (scenario, field) in cases {
            #expect(throws: TestServerError.invalidScenario(field)) { try scenario.validate() }
        }
    }
}

extension ScenarioTests {
    @Test func aBroadcastNumberIsReadBackFromItsPayloadAndNothingElseIsOne() {
        #expect(Scenario.broadcast(everyMilliseconds: 20).description == "accept, broadcast a number every 20 ms x 16 B")
        #expect(Scenario.Broadcast.number(in: Array("42......".utf8)) == 42)
        #expect(Scenario.Broadcast.number(in: Array("1234567".utf8)) == 1_234_567)
        #expect(Scenario.Broadcast.number(in: Array("4x2".utf8)) == nil)
        #expect(Scenario.Broadcast.number(in: Array("..".utf8)) == nil)
    }
}

@Suite struct ConnectionContextTests {
    @Test func headerLookupIsCaseInsensitiveAndPathDropsTheQuery() {
        let context = ConnectionContext(
            index: 2, target: "/chat?token=abc#top",
            headers: [HeaderField(name: "X-Tag", value: "a"), HeaderField(name: "x-tag", value: "b")],
            subprotocols: [])
        #expect(context.header("X-TAG") == "a, b")
        #expect(context.header("Missing") == nil)
        #expect(context.path == "/chat")
    }

    @Test func headerFieldDescriptionShowsTheNameButNeverTheValue() {
        let field = HeaderField(name: "Authorization", value: "Bearer s3cret")
        #expect(field.description == "Authorization: <13 bytes>")
    }
}
