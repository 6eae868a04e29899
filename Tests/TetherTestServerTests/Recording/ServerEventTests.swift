import Testing
import TetherTestServer

@Suite struct ServerEventTests {
    @Test func everyKindReadsAsOneConsoleLine() {
        let lines: [(ServerEvent.Kind, String)] = [
            (.connected, "conn 3 connected"),
            (.request(path: "/chat", headerCount: 6), "conn 3 request /chat (6 headers)"),
            (.opened(subprotocol: nil), "conn 3 opened"),
            (.opened(subprotocol: "chat"), "conn 3 opened subprotocol chat"),
            (.rejected(status: 503, retryAfterSeconds: 2), "conn 3 rejected 503 retry-after 2 s"),
            (.rejected(status: 401, retryAfterSeconds: nil), "conn 3 rejected 401"),
            (.badUpgrade(reason: "method must be GET"), "conn 3 bad upgrade (method must be GET), answered 400"),
            (.handshakeIgnored, "conn 3 handshake ignored"),
            (.message(.binary, bytes: 1024), "conn 3 binary 1024 bytes"),
            (.pingReceived(bytes: 8), "conn 3 ping 8 bytes"),
            (.pongSent(bytes: 8), "conn 3 pong sent 8 bytes"),
            (.pingSent(bytes: 8), "conn 3 ping sent 8 bytes"),
            (.pongReceived(bytes: 8), "conn 3 pong 8 bytes"),
            (.closeReceived(code: nil), "conn 3 close received (no code)"),
            (.closeSent(code: 1001), "conn 3 close sent 1001"),
            (.streamFinished(count: 10_000), "conn 3 sent 10000 messages"),
            (.sendReceived(id: "order-7", repeated: false), "conn 3 send order-7"),
            (.sendReceived(id: "order-7", repeated: true), "conn 3 send order-7 (a repeat: not taken again)"),
            (.subscribed(stream: "prices", after: 41), "conn 3 subscribe prices after 41"),
            (.subscribed(stream: "prices", after: nil), "conn 3 subscribe prices from now on"),
            (.ended(.protocolError(code: 1007)), "conn 3 ended: protocol error, closed with 1007"),
            (.ended(.closeTimedOut), "conn 3 ended: no close reply in time, reset"),
        ]
        for (kind, line) in lines {
            #expect(ServerEvent(connection: 3, at: 120, kind: kind).description == line)
        }
    }
}
