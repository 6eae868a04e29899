import Testing
import TetherWire

/// A connection as a client (frames from the server are unmasked), with the events it lends copied out.
private struct Harness {
    enum Seen: Equatable {
        case message(WireMessage)
        case closed(WebSocketConnection<SystemRandomNumberGenerator>.Closure)
    }

    var connection: WebSocketConnection<SystemRandomNumberGenerator>

    init(role: Role = .client, automaticPongs: Bool = true, maximumMessageSize: Int = 1 << 20) {
        self.connection = WebSocketConnection(
            role: role, maximumMessageSize: maximumMessageSize, automaticPongs: automaticPongs)
    }

    /// Feeds `bytes` and returns every event they produce.
    mutating func feed(_ bytes: [UInt8]) -> [Seen] {
        self.connection.receive(bytes)
        var seen: [Seen] = []
        while let event = self.connection.nextEvent({ event -> Seen in
            switch event {
            case .received(let message): .message(message.message)
            case .closed(let closure): .closed(closure)
            }
        }) {
            seen.append(event)
        }
        return seen
    }

    /// What the connection would write now, decoded as the peer reads it, and whether it seals the output.
    mutating func written() -> (messages: [WireMessage], seals: Bool) {
        var bytes: [UInt8] = []
        var seals = false
        self.connection.drainOutput { output, sealing in
            bytes = Array(output)
            seals = sealing
        }
        var peer = WebSocketDecoder(role: self.connection.role == .client ? .server : .client)
        peer.append(bytes)
        var messages: [WireMessage] = []
        while let message = try? peer.next() { messages.append(message) }
        return (messages, seals)
    }
}

@Suite struct WebSocketConnectionTests {
    @Test func aBurstOfPingsIsAnsweredWithOnePongForTheLatest() {
        var harness = Harness()
        let events = harness.feed(hex("89 01 01") + hex("89 01 02") + hex("89 01 03"))
        #expect(events == [.message(.ping([1])), .message(.ping([2])), .message(.ping([3]))])
        #expect(harness.written().messages == [.pong([3])])
        #expect(harness.written().messages == [])  // answered once
    }

    @Test func pingsDrainedOneByOneAreEachAnswered() {
        var harness = Harness()
        _ = harness.feed(hex("89 01 01"))
        #expect(harness.written().messages == [.pong([1])])
        _ = harness.feed(hex("89 01 02"))
        #expect(harness.written().messages == [.pong([2])])
    }

    @Test func withoutAutomaticPongsTheOwnerAnswers() throws {
        var harness = Harness(automaticPongs: false)
        #expect(harness.feed(hex("89 02 61 62")) == [.message(.ping(Array("ab".utf8)))])
        #expect(harness.written().messages == [])
        #expect(try harness.connection.pong(Array("ab".utf8)))
        #expect(harness.written().messages == [.pong(Array("ab".utf8))])
    }

    @Test func aCloseFromThePeerIsEchoedWithItsCodeAndEndsTheConnection() {
        var harness = Harness()
        let events = harness.feed(hex("81 02 68 69") + hex("88 05 03 e9 62 79 65") + hex("81 01 41"))
        #expect(events == [.message(.text("hi")), .closed(.byPeer(code: 1001, reason: "bye"))])
        #expect(harness.connection.state == .closed(.byPeer(code: 1001, reason: "bye")))
        let written = harness.written()
        #expect(written.messages == [.close(code: 1001, reason: "")])
        #expect(written.seals)
        #expect(harness.feed(hex("81 01 42")) == [])  // nothing is read after the end
    }

    @Test func anEmptyCloseIsAnsweredWithAnEmptyOne() {
        var harness = Harness()
        #expect(harness.feed(hex("88 00")) == [.closed(.byPeer(code: nil, reason: ""))])
        #expect(harness.written().messages == [.close(code: nil, reason: "")])
    }

    @Test func ourCloseWaitsForThePeersAnswerAndStillDeliversMessages() {
        var harness = Harness()
        let started = harness.connection.close(code: 4000, reason: "done")
        #expect(started)
        #expect(harness.connection.state == .closing(sentCode: 4000))
        let written = harness.written()
        #expect(written.messages == [.close(code: 4000, reason: "done")])
        #expect(written.seals)
        let startedAgain = harness.connection.close(code: 1000, reason: "")
        #expect(!startedAgain)  // once
        let events = harness.feed(hex("81 02 68 69") + hex("89 00") + hex("88 02 0f a0"))
        #expect(events == [
            .message(.text("hi")), .message(.ping([])), .closed(.byUs(sentCode: 4000, answeredCode: 4000, answeredReason: "")),
        ])
        #expect(harness.written().messages == [])  // no pong, no echo after our close frame
    }

    @Test func aPongStillOwedGoesOutBeforeOurCloseFrame() {
        var harness = Harness()
        _ = harness.feed(hex("89 01 07"))
        harness.connection.close(code: 1000, reason: "")
        #expect(harness.written().messages == [.pong([7]), .close(code: 1000, reason: "")])
    }

    @Test func anInvalidCloseCodeIsSentAs1000AndALongReasonIsCut() {
        var harness = Harness()
        harness.connection.close(code: 1005, reason: String(repeating: "é", count: 100))
        guard case .close(let code, let reason) = harness.written().messages.first else {
            Issue.record("no close frame")
            return
        }
        #expect(code == 1000)
        #expect(reason.utf8.count == 122)  // 61 two-byte characters: cut at a character boundary
    }

    @Test func aViolationAfterValidMessagesDeliversThemThenClosesWithItsCode() {
        var harness = Harness()
        let events = harness.feed(hex("81 02 68 69") + hex("82 01 07") + hex("c1 00"))
        let violation = ProtocolError(.reservedBitsSet(4))
        #expect(events == [.message(.text("hi")), .message(.binary([7])), .closed(.violation(violation))])
        #expect(harness.written().messages == [.close(code: 1002, reason: violation.reason)])
    }

    @Test func invalidUTF8ClosesWith1007AndATooBigMessageWith1009() {
        var text = Harness()
        _ = text.feed(hex("81 02 c3 28"))
        #expect(text.written().messages == [.close(code: 1007, reason: ProtocolError(.invalidUTF8).reason)])
        var big = Harness(maximumMessageSize: 200)
        _ = big.feed(hex("82 7e 01 00"))
        #expect(big.written().messages == [.close(code: 1009, reason: "frame too big")])
    }

    @Test func aViolationWhileClosingSendsNothingMore() {
        var harness = Harness()
        harness.connection.close(code: 1000, reason: "")
        _ = harness.written()
        #expect(harness.feed(hex("83 00")) == [.closed(.violation(ProtocolError(.unknownOpcode(3))))])
        #expect(harness.written().messages == [])
    }

    @Test func sendingWorksOnlyWhileOpen() throws {
        var harness = Harness(role: .server)
        let payload: [UInt8] = Array("echo".utf8)
        let sentText = payload.withUnsafeBytes { harness.connection.send(.text, payload: $0) }
        #expect(sentText)
        #expect(try harness.connection.ping([1, 2]))
        #expect(harness.written().messages == [.text("echo"), .ping([1, 2])])
        harness.connection.close(code: 1000, reason: "")
        let sentBinary = payload.withUnsafeBytes { harness.connection.send(.binary, payload: $0) }
        #expect(!sentBinary)
        #expect(try !harness.connection.ping([]))
        #expect(harness.written().messages == [.close(code: 1000, reason: "")])
    }

    @Test func aServerEchoesTheMessageItWasLentWholeAndFragmented() {
        var harness = Harness(role: .server)
        var echoes: [Bool] = []
        // RFC 6455 §5.7: a masked "Hello", then "Hel" + "lo" in two masked fragments, then a masked empty ping.
        let arrivals = [
            hex("81 85 37 fa 21 3d 7f 9f 4d 51 58"),
            hex("01 83 37 fa 21 3d 7f 9f 4d") + hex("80 82 37 fa 21 3d 5b 95"),
            hex("89 80 00 00 00 00"),
        ]
        for bytes in arrivals {
            harness.connection.receive(bytes)
            _ = harness.connection.nextEvent { _ in () }
            echoes.append(harness.connection.echoLastMessage())
        }
        #expect(echoes == [true, true, false])  // a ping is not data: its answer is a pong
        #expect(harness.written().messages == [.text("Hello"), .text("Hello"), .pong([])])
    }

    @Test func aClientMasksWhatItSendsAndAServerDoesNot() {
        var client = Harness(role: .client)
        client.connection.close(code: 1000, reason: "")
        var server = Harness(role: .server)
        server.connection.close(code: 1000, reason: "")
        var masked: [UInt8] = []
        client.connection.drainOutput { bytes, _ in masked = Array(bytes) }
        var plain: [UInt8] = []
        server.connection.drainOutput { bytes, _ in plain = Array(bytes) }
        #expect(masked[1] & 0x80 != 0)
        #expect(plain == hex("88 02 03 e8"))
    }

    @Test func aLargeOutputIsGivenAwayWholeAndASmallOneLentWithItsBufferKept() throws {
        var server = Harness(role: .server, maximumMessageSize: 16 << 20)
        let large = [UInt8](repeating: 0x61, count: 5 << 20)  // past the 4 MiB the engine keeps between writes
        _ = large.withUnsafeBytes { server.connection.send(.binary, payload: $0) }
        var given: [[UInt8]] = []
        var lent = 0
        server.connection.drainOutput(lending: { _, _ in lent += 1 }, giving: { bytes, seals in
            given.append(bytes)
            #expect(!seals)
        })
        #expect(lent == 0 && given.count == 1)
        var peer = WebSocketDecoder(role: .client, maximumMessageSize: 16 << 20)
        peer.append(given.first ?? [])
        #expect(try peer.next() == .binary(large), "the frame, whole")
        #expect(server.connection.outputByteCount == 0)

        // Then a close: small, lent, and sealing; nothing is given.
        server.connection.close(code: 1000, reason: "")
        var closeBytes: [UInt8] = []
        server.connection.drainOutput(lending: { bytes, seals in
            closeBytes = Array(bytes)
            #expect(seals)
        }, giving: { _, _ in Issue.record("a small output is lent, not given") })
        #expect(closeBytes == hex("88 02 03 e8"))
        #expect(given.count == 1)
    }

    @Test func bufferedInboundBytesCountWhatIsNotYetAnEvent() {
        var harness = Harness()
        harness.connection.receive(hex("01 03 61 62 63") + hex("80 05 64"))
        #expect(harness.connection.nextEvent { _ in () } == nil)
        #expect(harness.connection.bufferedInboundBytes == 3 + 3)  // the first fragment, the second's head
    }
}
