import Testing
@testable import TetherWire

/// An engine with its actions copied out as a transcript, over a simulated write queue: what the engine writes waits
/// in `queued` until the peer reads it (`peerReads`: at once).
private struct Harness {
    enum Seen: Equatable {
        case deliver(WireMessage)
        case pongReceived(UInt64)
        case pongSent([UInt8])
        /// The frames written, as the peer decodes them, and whether they seal the output.
        case write([WireMessage], seals: Bool)
        case pauseReading
        case resumeReading
        case awaitWriteRoom(atMost: Int)
        case armCloseTimer(milliseconds: Int)
        case closed(WebSocketClosure)
        case closeStream
        case resetStream
        case ended(WebSocketEnding, failedPings: [UInt64])
    }

    var engine: WebSocketConnection
    /// Bytes written and not yet read by the peer.
    var queued = 0
    /// The peer reads what is written at once.
    var peerReads = true
    /// Echo every data message delivered (as the test server does).
    var echoes = false
    /// Decodes what the engine writes, as the peer does.
    private var peer: WebSocketDecoder
    /// Encodes what the peer sends (masked when the peer is a client).
    private var peerEncoder: WebSocketEncoder<SystemRandomNumberGenerator>

    init(
        role: Role = .client, automaticPongs: Bool = true, maximumMessageSize: Int = 1 << 20,
        outbound: Watermarks = .standard
    ) {
        self.engine = WebSocketConnection(.init(
            role: role, maximumMessageSize: maximumMessageSize, automaticPongs: automaticPongs, outbound: outbound,
            closeTimeoutMilliseconds: 250))
        let peerRole: Role = role == .client ? .server : .client
        self.peer = WebSocketDecoder(role: peerRole, maximumMessageSize: 16 << 20)
        self.peerEncoder = WebSocketEncoder(role: peerRole, random: SystemRandomNumberGenerator())
    }

    /// Bytes from the peer, then every action the engine has.
    mutating func feed(_ bytes: [UInt8]) -> [Seen] {
        self.engine.bytesReceived(bytes)
        return self.run()
    }

    /// Frames the peer sends, encoded as it would.
    mutating func frames(_ messages: [(Opcode, [UInt8])]) -> [UInt8] {
        var bytes: [UInt8] = []
        for (opcode, payload) in messages {
            switch opcode {
            case .ping: try? self.peerEncoder.ping(payload, into: &bytes)
            case .pong: try? self.peerEncoder.pong(payload, into: &bytes)
            case .close:
                let code = payload.count >= 2 ? UInt16(payload[0]) << 8 | UInt16(payload[1]) : nil
                try? self.peerEncoder.close(code: code, reason: "", into: &bytes)
            default: self.peerEncoder.encode(opcode, payload: payload, into: &bytes)
            }
        }
        return bytes
    }

    /// Every action the engine has until it needs a new fact.
    mutating func run() -> [Seen] {
        var seen: [Seen] = []
        var bytes: [UInt8] = []
        while var next = self.engine.nextAction(queuedWriteBytes: self.queued, { action -> Seen in
            switch action {
            case .deliver(let message): .deliver(message.message)
            case .pongReceived(let id): .pongReceived(id)
            case .pongSent(let payload): .pongSent(payload)
            case .write(.borrowed(let lent), let seals):
                { bytes = Array(lent); return .write([], seals: seals) }()
            case .write(.owned(let given), let seals):
                { bytes = given; return .write([], seals: seals) }()
            case .pauseReading: .pauseReading
            case .resumeReading: .resumeReading
            case .awaitWriteRoom(let low): .awaitWriteRoom(atMost: low)
            case .armCloseTimer(let milliseconds): .armCloseTimer(milliseconds: milliseconds)
            case .closed(let closure): .closed(closure)
            case .closeStream: .closeStream
            case .resetStream: .resetStream
            case .ended(let ending, let failedPings): .ended(ending, failedPings: failedPings)
            }
        }) {
            if case .write(_, let seals) = next { next = self.written(bytes, seals: seals) }
            seen.append(next)
            if self.echoes, case .deliver(let message) = next, case .binary = message {
                let echoed = self.engine.echoLastMessage()
                #expect(echoed)
            }
        }
        return seen
    }

    private mutating func written(_ bytes: [UInt8], seals: Bool) -> Seen {
        if !self.peerReads { self.queued += bytes.count }
        self.peer.append(bytes)
        var messages: [WireMessage] = []
        while let message = try? self.peer.next() { messages.append(message) }
        return .write(messages, seals: seals)
    }

    /// The bytes `takeOutput` gives a sender on another thread, decoded.
    mutating func taken() -> [WireMessage] {
        var bytes: [UInt8] = []
        _ = self.engine.takeOutput { output, _ in
            switch output {
            case .borrowed(let lent): bytes = Array(lent)
            case .owned(let given): bytes = given
            }
        }
        self.peer.append(bytes)
        var messages: [WireMessage] = []
        while let message = try? self.peer.next() { messages.append(message) }
        return messages
    }
}

@Suite struct WebSocketConnectionTests {
    // MARK: Pings and flow control

    @Test func aPingIsAnsweredAtOnceWhileTheWriteQueueIsEmpty() {
        var harness = Harness()
        #expect(harness.feed(hex("89 01 01") + hex("89 01 02")) == [
            .deliver(.ping([1])), .write([.pong([1])], seals: false), .pongSent([1]),
            .deliver(.ping([2])), .write([.pong([2])], seals: false), .pongSent([2]),
        ])
    }

    @Test func whileTheQueueHoldsBytesABurstOfPingsIsAnsweredOnceForTheLatest() {
        var harness = Harness()
        harness.queued = 10  // the kernel has not taken everything yet
        #expect(harness.feed(hex("89 01 01") + hex("89 01 02") + hex("89 01 03")) == [
            .deliver(.ping([1])), .deliver(.ping([2])), .deliver(.ping([3])),
            .write([.pong([3])], seals: false), .pongSent([3]),
        ])
        #expect(harness.run() == [])  // answered once
    }

    @Test func aPingFloodFromAPeerThatDoesNotReadCostsOnePongPerBatchAndStopsReading() {
        var harness = Harness(outbound: Watermarks(high: 20, low: 4))
        harness.peerReads = false
        var flood: [UInt8] = []
        for number in 0..<1000 { flood += hex("89 02") + [UInt8(number >> 8), UInt8(number & 0xff)] }
        let seen = harness.feed(flood)
        // The first ping finds the queue empty and is answered at once; the rest are coalesced into one pong.
        #expect(seen.filter { if case .write = $0 { true } else { false } } == [
            .write([.pong([0, 0])], seals: false), .write([.pong([0x03, 0xe7])], seals: false),
        ])
        #expect(seen.count == 1000 + 4)
        #expect(harness.queued == 2 * 8)  // two masked pongs
        // A second batch: one more pong, which puts the queue over its high watermark: reading stops.
        #expect(harness.feed(hex("89 01 07") + hex("89 01 08")) == [
            .deliver(.ping([7])), .deliver(.ping([8])), .write([.pong([8])], seals: false), .pongSent([8]),
            .awaitWriteRoom(atMost: 4), .pauseReading,
        ])
        // What was read before the pause is still handled.
        #expect(harness.feed(hex("89 01 09")) == [
            .deliver(.ping([9])), .write([.pong([9])], seals: false), .pongSent([9]),
        ])
        harness.queued = 4
        harness.engine.writeRoomAvailable()
        #expect(harness.run() == [.resumeReading])
    }

    @Test func aServerEchoingToAPeerThatStopsReadingStopsReadingAboveTheHighWatermark() {
        var harness = Harness(role: .server, outbound: Watermarks(high: 100, low: 20))
        harness.peerReads = false
        harness.echoes = true
        let message = [UInt8](repeating: 0x61, count: 60)
        // Both echoes go out in one write, at the end of the batch.
        #expect(harness.feed(harness.frames([(.binary, message), (.binary, message)])) == [
            .deliver(.binary(message)), .deliver(.binary(message)),
            .write([.binary(message), .binary(message)], seals: false),
            .awaitWriteRoom(atMost: 20), .pauseReading,
        ])
        // A sender on another thread is told to wait too.
        let decision = message.withUnsafeBytes {
            harness.engine.encodeMessage(.binary, payload: $0, queuedWriteBytes: harness.queued)
        }
        #expect(decision == .waitForRoom(atMost: 20))
        harness.queued = 20
        harness.engine.writeRoomAvailable()
        #expect(harness.run() == [.resumeReading])
    }

    @Test func aHoldStopsDeliveryAndReadingUntilItIsReleased() {
        var harness = Harness()
        harness.engine.consumerHolds(true)
        #expect(harness.feed(hex("81 01 61") + hex("81 01 62")) == [.pauseReading])
        harness.engine.consumerHolds(false)
        #expect(harness.run() == [.resumeReading, .deliver(.text("a")), .deliver(.text("b"))])
    }

    @Test func ourPingsAreMatchedToTheirPongsByIdAndTheUnansweredFailAtTheEnd() {
        var harness = Harness()
        let done1 = harness.engine.sendPing(id: 7)
        #expect(done1)
        let done2 = harness.engine.sendPing(id: 8)
        #expect(done2)
        let eight: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 8]
        #expect(harness.taken() == [.ping([0, 0, 0, 0, 0, 0, 0, 7]), .ping(eight)])
        #expect(harness.feed(hex("8a 08") + eight) == [.deliver(.pong(eight)), .pongReceived(8)])
        #expect(harness.feed(hex("8a 08") + eight) == [.deliver(.pong(eight))])  // repeated: reported once
        harness.engine.streamEnded()
        #expect(harness.run() == [.ended(.streamEnded(afterOurClose: false), failedPings: [7])])
        let refused101 = harness.engine.sendPing(id: 9)
        #expect(!refused101)
    }

    // MARK: Closing

    @Test func aCloseFromThePeerIsEchoedThenTheStreamClosesWithinTheCloseTimeout() {
        var harness = Harness()
        #expect(harness.feed(hex("81 02 68 69") + hex("88 05 03 e9 62 79 65") + hex("81 01 41")) == [
            .deliver(.text("hi")), .closed(.byPeer(code: 1001, reason: "bye")),
            .write([.close(code: 1001, reason: "")], seals: true), .closeStream, .armCloseTimer(milliseconds: 250),
        ])
        #expect(harness.feed(hex("81 01 42")) == [])  // nothing is read after the close
        harness.engine.streamEnded()
        #expect(harness.run() == [.ended(.closed(.byPeer(code: 1001, reason: "bye")), failedPings: [])])
    }

    @Test func aPeerThatDoesNotReadOurLastBytesIsResetWhenTheCloseTimerFires() {
        var harness = Harness(role: .server)
        _ = harness.feed(harness.frames([(.close, hex("03 e8"))]))
        harness.engine.closeTimerFired()  // the flush stalled
        #expect(harness.run() == [.resetStream])
        harness.engine.streamEnded()
        #expect(harness.run() == [.ended(.closed(.byPeer(code: 1000, reason: "")), failedPings: [])])
    }

    @Test func anEmptyCloseIsAnsweredWithAnEmptyOne() {
        var harness = Harness()
        #expect(harness.feed(hex("88 00")).prefix(2) == [
            .closed(.byPeer(code: nil, reason: "")), .write([.close(code: nil, reason: "")], seals: true),
        ])
    }

    @Test func ourCloseSealsTheOutputArmsTheTimerAndStillDeliversMessages() {
        var harness = Harness()
        let done3 = harness.engine.close(code: 4000, reason: "done")
        #expect(done3)
        guard case .closing(let closing) = harness.engine.state else {
            Issue.record("not closing")
            return
        }
        #expect(closing.sentCode == 4000)
        #expect(harness.run() == [
            .write([.close(code: 4000, reason: "done")], seals: true), .armCloseTimer(milliseconds: 250),
        ])
        let refused102 = harness.engine.close(code: 1000, reason: "")
        #expect(!refused102)  // once
        #expect(harness.feed(hex("81 02 68 69") + hex("89 00") + hex("88 02 0f a0")) == [
            .deliver(.text("hi")), .deliver(.ping([])),  // no pong after our close frame
            .closed(.byUs(sentCode: 4000, answeredCode: 4000, answeredReason: "")),
            .closeStream, .armCloseTimer(milliseconds: 250),
        ])
    }

    @Test func aCloseThatIsNeverAnsweredResetsTheStreamAtTheCloseTimeout() {
        var harness = Harness()
        let done4 = harness.engine.sendPing(id: 1)
        #expect(done4)
        _ = harness.taken()
        harness.engine.close(code: 1000, reason: "")
        _ = harness.run()
        #expect(harness.feed(hex("81 01 61")) == [.deliver(.text("a"))])
        harness.engine.closeTimerFired()
        #expect(harness.run() == [.resetStream])
        #expect(harness.feed(hex("88 00")) == [])  // too late
        harness.engine.streamEnded()
        #expect(harness.run() == [.ended(.closeTimedOut, failedPings: [1])])
    }

    @Test func aStreamThatEndsMidFrameEndsTheConnectionWithoutDeliveringThePart() {
        var harness = Harness()
        #expect(harness.feed(hex("81 05 68 65")) == [])
        #expect(harness.engine.bufferedInboundBytes == 4)
        harness.engine.streamEnded()
        #expect(harness.run() == [.ended(.streamEnded(afterOurClose: false), failedPings: [])])
        harness.engine.closeTimerFired()  // a timer that lost the race: nothing
        #expect(harness.run() == [])
    }

    @Test func aStreamThatEndsAfterOurCloseSaysSo() {
        var harness = Harness()
        harness.engine.close(code: 1000, reason: "")
        _ = harness.run()
        harness.engine.streamEnded()
        #expect(harness.run() == [.ended(.streamEnded(afterOurClose: true), failedPings: [])])
    }

    @Test func anOwnerResetDropsTheStream() {
        var harness = Harness()
        harness.engine.reset()
        #expect(harness.run() == [.resetStream])
        harness.engine.streamEnded()
        #expect(harness.run() == [.ended(.reset, failedPings: [])])
    }

    @Test func aPongStillOwedGoesOutBeforeOurCloseFrame() {
        var harness = Harness()
        harness.engine.bytesReceived(hex("89 01 07"))
        // The ping is delivered; with bytes queued, its pong waits for the end of the batch.
        _ = harness.engine.nextAction(queuedWriteBytes: 1) { _ in () }
        harness.engine.close(code: 1000, reason: "")
        #expect(harness.run() == [
            .pongSent([7]), .write([.pong([7]), .close(code: 1000, reason: "")], seals: true),
            .armCloseTimer(milliseconds: 250),
        ])
    }

    @Test func anInvalidCloseCodeIsSentAs1000AndALongReasonIsCut() {
        var harness = Harness()
        harness.engine.close(code: 1005, reason: String(repeating: "é", count: 100))
        guard case .write(let messages, _) = harness.run().first, case .close(let code, let reason) = messages.first
        else {
            Issue.record("no close frame")
            return
        }
        #expect(code == 1000)
        #expect(reason.utf8.count == 122)  // 61 two-byte characters: cut at a character boundary
    }

    // MARK: Violations

    @Test func aViolationAfterValidMessagesDeliversThemThenClosesWithItsCode() {
        var harness = Harness()
        let violation = ProtocolError(.reservedBitsSet(4))
        #expect(harness.feed(hex("81 02 68 69") + hex("82 01 07") + hex("c1 00")) == [
            .deliver(.text("hi")), .deliver(.binary([7])), .closed(.violation(violation, sentClose: true)),
            .write([.close(code: 1002, reason: violation.reason)], seals: true),
            .closeStream, .armCloseTimer(milliseconds: 250),
        ])
    }

    @Test func invalidUTF8ClosesWith1007AndATooBigMessageWith1009() {
        var text = Harness()
        #expect(text.feed(hex("81 02 c3 28"))[1] == .write(
            [.close(code: 1007, reason: ProtocolError(.invalidUTF8).reason)], seals: true))
        var big = Harness(maximumMessageSize: 200)
        #expect(big.feed(hex("82 7e 01 00"))[1] == .write([.close(code: 1009, reason: "frame too big")], seals: true))
    }

    @Test func aViolationWhileClosingSendsNothingMore() {
        var harness = Harness()
        harness.engine.close(code: 1000, reason: "")
        _ = harness.run()
        #expect(harness.feed(hex("83 00")) == [
            .closed(.violation(ProtocolError(.unknownOpcode(3)), sentClose: false)),
            .closeStream, .armCloseTimer(milliseconds: 250),
        ])
    }

    // MARK: Sending

    @Test func sendingWorksOnlyWhileOpenAndTheEngineIsTheOneAnswer() throws {
        var harness = Harness(role: .server)
        let payload: [UInt8] = Array("echo".utf8)
        let sentText = payload.withUnsafeBytes { harness.engine.send(.text, payload: $0) }
        #expect(sentText)
        #expect(try harness.engine.ping([1, 2]))
        #expect(harness.run() == [.write([.text("echo"), .ping([1, 2])], seals: false)])
        let frame = payload.withUnsafeBytes { harness.engine.encodeMessage(.binary, payload: $0, queuedWriteBytes: 0) }
        #expect(frame == .frame(hex("82 04") + payload))
        harness.engine.close(code: 1000, reason: "")
        let sentBinary = payload.withUnsafeBytes { harness.engine.send(.binary, payload: $0) }
        #expect(!sentBinary)
        let refused = payload.withUnsafeBytes {
            harness.engine.encodeMessage(.binary, payload: $0, queuedWriteBytes: nil)
        }
        #expect(refused == .notOpen)
        #expect(try !harness.engine.ping([]))
        let refused103 = harness.engine.sendPing(id: 1)
        #expect(!refused103)
        #expect(harness.run().first == .write([.close(code: 1000, reason: "")], seals: true))
    }

    /// What the engine encoded and has not handed out yet (a batch the loop writes at its end) goes out before a
    /// frame encoded after it for a sender on another thread, in the same bytes: written as they come, frames keep
    /// the order they were encoded in, which permessage-deflate's context takeover needs.
    @Test func aSendersFrameCarriesTheOutputEncodedBeforeIt() {
        var harness = Harness(role: .server)
        let first = Array("first".utf8)
        let second = Array("second".utf8)
        let sent = first.withUnsafeBytes { harness.engine.send(.text, payload: $0) }
        #expect(sent)
        let frame = second.withUnsafeBytes { harness.engine.encodeMessage(.text, payload: $0, queuedWriteBytes: 0) }
        #expect(frame == .frame(hex("81 05") + first + hex("81 06") + second))
        #expect(harness.run() == [])  // nothing is left for the loop to write
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
        harness.queued = 1  // so that the pong waits for the end of the batch too
        for bytes in arrivals {
            harness.engine.bytesReceived(bytes)
            _ = harness.engine.nextAction(queuedWriteBytes: 1) { _ in () }
            echoes.append(harness.engine.echoLastMessage())
        }
        #expect(echoes == [true, true, false])  // a ping is not data: its answer is a pong
        #expect(harness.run().first == .write([.text("Hello"), .text("Hello"), .pong([])], seals: false))
    }

    @Test func aClientMasksWhatItSendsAndAServerDoesNot() {
        var client = Harness(role: .client)
        client.engine.close(code: 1000, reason: "")
        var server = Harness(role: .server)
        server.engine.close(code: 1000, reason: "")
        var masked: [UInt8] = []
        _ = client.engine.takeOutput { output, _ in if case .borrowed(let bytes) = output { masked = Array(bytes) } }
        var plain: [UInt8] = []
        _ = server.engine.takeOutput { output, _ in if case .borrowed(let bytes) = output { plain = Array(bytes) } }
        #expect(masked[1] & 0x80 != 0)
        #expect(plain == hex("88 02 03 e8"))
    }

    @Test func aLargeOutputIsGivenAwayWholeAndASmallOneLentWithItsBufferKept() throws {
        var server = Harness(role: .server, maximumMessageSize: 16 << 20)
        let large = [UInt8](repeating: 0x61, count: 5 << 20)  // past the 4 MiB the engine keeps between writes
        _ = large.withUnsafeBytes { server.engine.send(.binary, payload: $0) }
        var given: [[UInt8]] = []
        _ = server.engine.nextAction(queuedWriteBytes: 0) { action in
            guard case .write(.owned(let bytes), let seals) = action else {
                Issue.record("not given")
                return
            }
            given.append(bytes)
            #expect(!seals)
        }
        var peer = WebSocketDecoder(role: .client, maximumMessageSize: 16 << 20)
        peer.append(given.first ?? [])
        #expect(try peer.next() == .binary(large), "the frame, whole")
        #expect(server.engine.outputByteCount == 0)

        // Then a close: small, lent, and sealing.
        server.engine.close(code: 1000, reason: "")
        var closeBytes: [UInt8] = []
        _ = server.engine.nextAction(queuedWriteBytes: 0) { action in
            guard case .write(.borrowed(let bytes), let seals) = action else {
                Issue.record("not lent")
                return
            }
            closeBytes = Array(bytes)
            #expect(seals)
        }
        #expect(closeBytes == hex("88 02 03 e8"))
    }

    @Test func bufferedInboundBytesCountWhatIsNotYetDelivered() {
        var harness = Harness()
        #expect(harness.feed(hex("01 03 61 62 63") + hex("80 05 64")) == [])
        #expect(harness.engine.bufferedInboundBytes == 3 + 3)  // the first fragment, the second's head
    }
}

/// What the engine says of the frames arriving, for the heartbeat's proof of progress (a late pong may be queued
/// behind a frame still arriving).
extension WebSocketConnectionTests {
    @Test func aFrameArrivingByteByByteIsInProgressUntilItsLastByte() {
        var harness = Harness()
        #expect(harness.engine.inboundFrames == (0, false))
        let frame = harness.frames([(.binary, Array(repeating: 7, count: 300))])
        for index in 0..<(frame.count - 1) {
            #expect(harness.feed([frame[index]]) == [])
            #expect(harness.engine.inboundFrames == (0, true), "after byte \(index)")
        }
        #expect(harness.feed([frame[frame.count - 1]]) == [.deliver(.binary(Array(repeating: 7, count: 300)))])
        #expect(harness.engine.inboundFrames == (1, false))
    }

    @Test func wholeFramesAndFragmentsCountAndAPartialNextOneIsInProgress() {
        var harness = Harness()
        // A message in two fragments, a ping between them, a pong, then the first 3 bytes of the next frame.
        var bytes = hex("01 02 68 69") + hex("89 01 05") + hex("80 01 21") + hex("8A 00")
        bytes += hex("81 05 68")
        _ = harness.feed(bytes)
        #expect(harness.engine.inboundFrames == (4, true))
        _ = harness.feed(hex("65 6C 6C 6F"))
        #expect(harness.engine.inboundFrames == (5, false))
    }

    @Test func framesTheConsumerHoldsAreCountedOnceDecoded() {
        var harness = Harness()
        harness.engine.consumerHolds(true)
        _ = harness.run()
        _ = harness.feed(hex("81 01 61") + hex("81 01 62"))
        #expect(harness.engine.inboundFrames.completed == 0)  // waiting whole in the buffer, not decoded yet
        harness.engine.consumerHolds(false)
        _ = harness.run()
        #expect(harness.engine.inboundFrames == (2, false))
    }
}
