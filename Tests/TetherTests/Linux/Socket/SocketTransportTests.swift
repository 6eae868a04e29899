#if os(Linux)
import Foundation
import Testing
import TetherCore
import TetherPOSIX
@testable import TetherWire
@testable import Tether
import TetherTestSupport

/// `SocketTransport` against scripted raw peers over loopback. Every wait is on an explicit signal (the client's
/// event stream, the peer's byte stream); the time limit only turns a missing event into a failure.
@Suite(.timeLimit(.minutes(1))) struct SocketTransportTests {
    // MARK: Opening and data

    @Test func openingHandshakeCarriesTargetHostHeadersAndSubprotocols() async throws {
        var peer = try ScriptedPeer()
        var client = ClientProbe(
            url: peer.url("/chat/room%201?token=abc&x=1"),
            headers: [(name: "Authorization", value: "Bearer secret")],
            subprotocols: ["chat.v2", "chat.v1"]
        )
        let server = await peer.accept()

        let request = try await server.open(subprotocol: "chat.v1")
        #expect(request.target == "/chat/room%201?token=abc&x=1")
        #expect(request.header("Host") == "127.0.0.1:\(peer.port)")
        #expect(request.header("Authorization") == "Bearer secret")
        #expect(request.subprotocols == ["chat.v2", "chat.v1"])
        #expect(await client.next() == .opened("chat.v1"))

        client.connection.close(code: 1000, reason: "")
        _ = try await server.nextMessage()
        try await server.sendClose(code: 1000)
        #expect(await client.rest() == [.ended(.closedLocally)])
        await peer.stop()
    }

    @Test func textAndBinaryMessagesEchoInOrderIncludingOneMebibyteAndFragments() async throws {
        var peer = try ScriptedPeer()
        var client = ClientProbe(url: peer.url())
        let server = await peer.accept()
        try await server.open()
        #expect(await client.next() == .opened(nil))

        let large = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        try await client.connection.send(.text("héllo 👋"))
        try await client.connection.send(.binary(Data([0, 1, 2])))
        try await client.connection.send(.binary(Data(large)))
        try await client.connection.send(.text(""))
        #expect(try await server.nextMessage() == .text("héllo 👋"))
        #expect(try await server.nextMessage() == .binary([0, 1, 2]))
        #expect(try await server.nextMessage() == .binary(large))
        #expect(try await server.nextMessage() == .text(""))

        // The server answers in fragments, one cut inside a multi-byte character.
        try await server.sendText("héllo 👋", fragmentSize: 2)
        try await server.sendBinary(large, fragmentSize: 100_000)
        try await server.sendBinary([])
        #expect(await client.next() == .text("héllo 👋"))
        #expect(await client.next() == .binary(Data(large)))
        #expect(await client.next() == .binary(Data()))

        try await server.sendClose(code: 1000)
        #expect(await client.rest() == [.ended(.peerClosed(code: 1000))])
        await peer.stop()
    }

    /// A large binary message is delivered in the storage it was received into (no copy out of the decoder): each
    /// arrives whole and intact, and one kept by the app stays so while the connection goes on receiving.
    @Test func largeBinaryMessagesKeptByTheAppStayIntactWhileMoreArrive() async throws {
        var peer = try ScriptedPeer()
        var client = ClientProbe(url: peer.url())
        let server = await peer.accept()
        try await server.open()
        #expect(await client.next() == .opened(nil))

        let first = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let second = (0..<300_001).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 1) }
        try await server.sendBinary(first)
        guard case .binary(let kept) = await client.next() else {
            Issue.record("no binary message")
            return
        }
        #expect(kept == Data(first))
        try await server.sendBinary(second)
        try await server.sendText("between")
        try await server.sendBinary(first)
        #expect(await client.next() == .binary(Data(second)))
        #expect(await client.next() == .text("between"))
        #expect(await client.next() == .binary(Data(first)))
        #expect(kept == Data(first), "a message the app keeps is its own, whatever comes after")

        try await server.sendClose(code: 1000)
        #expect(await client.rest() == [.ended(.peerClosed(code: 1000))])
        await peer.stop()
    }

    /// What the heartbeat asks at a pong deadline: the socket transport's driver notes when bytes came, and its
    /// engine counts frames, so that a frame still arriving is told from a link that stopped.
    @Test func inboundProgressSaysWhetherAFrameIsArrivingAndWhenItsBytesCame() async throws {
        var peer = try ScriptedPeer()
        var client = ClientProbe(url: peer.url())
        let server = await peer.accept()
        try await server.open()
        #expect(await client.next() == .opened(nil))
        let opened = try #require(client.connection.inboundProgress())
        #expect(opened.framesCompleted == 0 && !opened.frameInProgress && opened.sinceLastFrameCompleted == nil)

        // One write: a whole message, then the first half of a 1,000-byte one. When the first is delivered, the
        // read that brought both has been handled.
        var encoder = WebSocketEncoder(role: .server)
        var bytes: [UInt8] = []
        encoder.text("first", into: &bytes)
        var second: [UInt8] = []
        encoder.binary(Array(repeating: 9, count: 1_000), into: &second)
        try await server.write(bytes + second.prefix(500))
        #expect(await client.next() == .text("first"))
        let arriving = try #require(client.connection.inboundProgress())
        #expect(arriving.framesCompleted == 1 && arriving.frameInProgress)
        #expect(arriving.sinceLastByte.map { $0 >= .zero && $0 < TestTime.scaled(.seconds(5)) } == true)
        // The read that completed the first brought the latest bytes too (or an earlier one, should TCP split them).
        #expect(arriving.sinceLastFrameCompleted.map { $0 >= arriving.sinceLastByte! } == true)

        try await server.write(Array(second.dropFirst(500)))
        #expect(await client.next() == .binary(Data(repeating: 9, count: 1_000)))
        let whole = try #require(client.connection.inboundProgress())
        #expect(whole.framesCompleted == 2 && !whole.frameInProgress)
        #expect(whole.sinceLastFrameCompleted == whole.sinceLastByte)  // the latest bytes completed it

        try await server.sendClose(code: 1000)
        #expect(await client.rest() == [.ended(.peerClosed(code: 1000))])
        #expect(client.connection.inboundProgress() == nil)  // over: nothing to tell
        await peer.stop()
    }

    @Test func framesSentRightAfterTheResponseHeaderAreDelivered() async throws {
        var peer = try ScriptedPeer()
        var client = ClientProbe(url: peer.url())
        let server = await peer.accept()
        let request = try await server.readRequest()
        var encoder = WebSocketEncoder(role: .server)
        var bytes = ServerHandshake.accept(request)
        encoder.text("early", into: &bytes)
        try await server.write(bytes)

        #expect(await client.next() == .opened(nil))
        #expect(await client.next() == .text("early"))
        server.reset()
        #expect(await client.rest() == [.ended(.receiveFailed)])
        await peer.stop()
    }

    @Test func hostNamesResolveThroughTheResolver() async throws {
        var peer = try ScriptedPeer()
        var client = ClientProbe(url: URL(string: "ws://localhost:\(peer.port)/")!)
        let server = await peer.accept()
        let request = try await server.open()
        #expect(request.header("Host") == "localhost:\(peer.port)")
        #expect(await client.next() == .opened(nil))
        server.reset()
        #expect(await client.rest() == [.ended(.receiveFailed)])
        await peer.stop()
    }

    @Test func ipv6LoopbackURLConnects() async throws {
        var peer = try ScriptedPeer(host: "::1")
        var client = ClientProbe(url: peer.url("/v6"))
        let server = await peer.accept()
        let request = try await server.open()
        #expect(request.header("Host") == "[::1]:\(peer.port)")
        #expect(server.tcp.remoteAddress?.family == .ipv6)
        #expect(await client.next() == .opened(nil))
        try await client.connection.send(.text("over v6"))
        #expect(try await server.nextMessage() == .text("over v6"))
        try await server.sendClose(code: nil)
        #expect(await client.rest() == [.ended(.peerClosed(code: nil))])
        await peer.stop()
    }

    // MARK: Pings

    @Test func pingCarriesItsIdAndOnlyTheMatchingFirstPongCounts() async throws {
        var peer = try ScriptedPeer()
        var client = ClientProbe(url: peer.url())
        let server = await peer.accept()
        try await server.open()
        #expect(await client.next() == .opened(nil))

        client.connection.sendPing(id: 0x0102_0304_0506_0708)
        #expect(try await server.nextMessage() == .ping([1, 2, 3, 4, 5, 6, 7, 8]))
        try await server.sendPong([9, 9])  // unsolicited, not an id
        try await server.sendPong([0, 0, 0, 0, 0, 0, 0, 99])  // an id never sent
        try await server.sendPong([1, 2, 3, 4, 5, 6, 7, 8])
        try await server.sendPong([1, 2, 3, 4, 5, 6, 7, 8])  // duplicate
        try await server.sendText("barrier")
        #expect(await client.next() == .pong(0x0102_0304_0506_0708))
        #expect(await client.next() == .text("barrier"))

        try await server.sendClose(code: 1001)
        #expect(await client.rest() == [.ended(.peerClosed(code: 1001))])
        await peer.stop()
    }

    @Test func serverPingIsAnsweredWithPongCarryingTheSamePayload() async throws {
        var peer = try ScriptedPeer()
        var client = ClientProbe(url: peer.url())
        let server = await peer.accept()
        try await server.open()
        #expect(await client.next() == .opened(nil))

        try await server.sendPing([0xCA, 0xFE])
        #expect(try await server.nextMessage() == .pong([0xCA, 0xFE]))
        try await server.sendPing([])
        #expect(try await server.nextMessage() == .pong([]))

        server.reset()
        #expect(await client.rest() == [.ended(.receiveFailed)])
        await peer.stop()
    }

    @Test func thousandsOfMessagesInterleavedWithPingsArriveInOrderAndThePingsBehindABacklogAreCoalesced()
        async throws
    {
        var peer = try ScriptedPeer()
        // High enough that the backlog below never stops the client's reading.
        let outbound = Watermarks(high: 256 << 20, low: 128 << 20)
        let connection = SocketConnection(
            request: TransportRequest(url: peer.url(), outboundWatermarks: outbound), loop: .shared)
        var client = ClientProbe(connection)
        let server = await peer.accept()
        try await server.open()
        #expect(await client.next() == .opened(nil))

        // A backlog in the client's write queue: the peer stops reading and the client writes three 16 MiB
        // messages, more than both kernels' socket buffers hold (loopback autotunes up to 32 + 4 MiB here). They are
        // queued by the driver as `send` does, without awaiting the kernel, so that the backlog is there before the
        // burst.
        server.tcp.pauseReading()
        let webSocket = try #require(connection.slot.webSocket)
        let large = [UInt8](repeating: 0x2a, count: 16 << 20)
        for _ in 0..<3 {
            let sending = large.withUnsafeBytes { webSocket.send(.binary, payload: $0, checkingRoom: false) }
            guard case .started = sending else {
                Issue.record("the driver refused the message: \(sending)")
                return
            }
        }
        #expect(webSocket.queuedWriteBytes > 0)

        var encoder = WebSocketEncoder(role: .server)
        var burst: [UInt8] = []
        for index in 0..<5_000 {
            encoder.text("message \(index)", into: &burst)
            if index % 50 == 0 { try encoder.ping([UInt8(index / 50)], into: &burst) }
        }
        try await server.write(burst)
        for index in 0..<5_000 {
            let event = await client.next()
            guard event == .text("message \(index)") else {
                Issue.record("message \(index): got \(String(describing: event))")
                break
            }
        }
        server.tcp.resumeReading()
        for _ in 0..<3 {
            #expect(try await server.nextMessage() == .binary(large))
        }
        // Behind a backlog, the pongs owed within one read are coalesced (RFC 6455 §5.5.3): they answer the pings
        // in order, skipping some, and the latest ping is always answered.
        var answered: [Int] = []
        while answered.last != 99 {
            guard case .pong(let payload) = try await server.nextMessage(), payload.count == 1 else {
                Issue.record("expected a pong after \(answered)")
                break
            }
            answered.append(Int(payload[0]))
        }
        #expect(answered == answered.sorted() && Set(answered).count == answered.count)
        #expect(answered.last == 99)
        #expect(answered.count < 100, "every ping got its own pong: nothing was coalesced")
        for index in 0..<200 {
            try await client.connection.send(.text("reply \(index)"))
        }
        for index in 0..<200 {
            #expect(try await server.nextMessage() == .text("reply \(index)"))
        }
        try await server.sendClose(code: 1000)
        #expect(await client.rest() == [.ended(.peerClosed(code: 1000))])
        await peer.stop()
    }

    @Test func pingsOutstandingWhenTheConnectionBreaksFailBeforeTheEnd() async throws {
        var peer = try ScriptedPeer()
        var client = ClientProbe(url: peer.url())
        let server = await peer.accept()
        try await server.open()
        #expect(await client.next() == .opened(nil))

        client.connection.sendPing(id: 1)
        client.connection.sendPing(id: 2)
        #expect(try await server.nextMessage() == .ping([0, 0, 0, 0, 0, 0, 0, 1]))
        #expect(try await server.nextMessage() == .ping([0, 0, 0, 0, 0, 0, 0, 2]))
        try await server.sendPong([0, 0, 0, 0, 0, 0, 0, 2])
        try await server.sendText("last words")
        server.reset()
        #expect(await client.rest() == [.pong(2), .text("last words"), .pingFailed(1), .ended(.receiveFailed)])
        await peer.stop()
    }

    @Test func pingBeforeOpenFailsOnce() async throws {
        var peer = try ScriptedPeer()
        var client = ClientProbe(url: peer.url())
        let server = await peer.accept()
        _ = try await server.readRequest()
        client.connection.sendPing(id: 5)
        client.connection.close(code: 1000, reason: "")
        #expect(await client.rest() == [.pingFailed(5), .ended(.closedLocally)])
        #expect(await server.waitForEnd() == .failed(.reset))
        await peer.stop()
    }

    @Test func aHandlerHearsEveryEventOnTheLoopInOrderAndNothingAfterTheEnd() async throws {
        var peer = try ScriptedPeer()
        let (heard, sink) = AsyncStream.makeStream(of: (Seen, Bool).self)
        let request = TransportRequest(url: peer.url())
        let delivering = SocketTransport().connect(request, deliveringOn: EventLoop.shared) { event in
            sink.yield((Seen(event), EventLoop.shared.inEventLoop))
        }
        let connection = try #require(delivering)
        var events = heard.makeAsyncIterator()
        func next() async -> Seen? {
            guard let (seen, onLoop) = await events.next() else { return nil }
            #expect(onLoop, "\(seen) was delivered off the loop")
            return seen
        }
        let server = await peer.accept()
        _ = try await server.readRequest()
        connection.sendPing(id: 7)  // not open yet: fails, on a later turn of the loop
        #expect(await next() == .pingFailed(7))
        try await server.acceptRequest()
        #expect(await next() == .opened(nil))
        try await server.sendText("hello")
        #expect(await next() == .text("hello"))
        try await server.sendClose(code: 1000)
        #expect(await next() == .ended(.peerClosed(code: 1000)))
        connection.sendPing(id: 8)  // after the end: nothing more reaches the handler
        try await EventLoop.shared.submit {}
        try await EventLoop.shared.submit {}
        sink.finish()
        #expect(await next() == nil)
        var stream = connection.events.makeAsyncIterator()
        #expect(await stream.next() == nil, "with a handler the stream only finishes")
        await peer.stop()
    }

    @Test func itDeliversDirectlyOnlyOnItsOwnLoop() throws {
        let other = try EventLoop()
        defer { other.shutdown() }
        let request = TransportRequest(url: URL(string: "ws://127.0.0.1:9/")!)
        let connection = SocketTransport().connect(request, deliveringOn: other) { _ in }
        #expect(connection == nil, "another loop's thread is not where the sockets are read")
    }

    // MARK: Sending

    @Test func sendBeforeOpenAndAfterTheEndThrowsNotOpen() async throws {
        var peer = try ScriptedPeer()
        var client = ClientProbe(url: peer.url())
        let server = await peer.accept()
        _ = try await server.readRequest()
        await #expect(throws: WebSocketSendError.notOpen) { try await client.connection.send(.text("too early")) }

        try await server.acceptRequest()
        #expect(await client.next() == .opened(nil))
        try await server.sendClose(code: 1000)
        #expect(await client.rest() == [.ended(.peerClosed(code: 1000))])
        await #expect(throws: WebSocketSendError.notOpen) { try await client.connection.send(.text("too late")) }
        await #expect(throws: WebSocketSendError.notOpen) { try await client.connection.send(.binary(Data([1]))) }
        await peer.stop()
    }

    @Test func messagesOverTheLimitAreRefusedBeforeAnythingIsSent() async throws {
        var peer = try ScriptedPeer()
        var client = ClientProbe(url: peer.url(), maximumMessageSize: 1024)
        let server = await peer.accept()
        try await server.open()
        #expect(await client.next() == .opened(nil))

        await #expect(throws: WebSocketSendError.messageTooLarge(size: 1025, limit: 1024)) {
            try await client.connection.send(.binary(Data(count: 1025)))
        }
        await #expect(throws: WebSocketSendError.messageTooLarge(size: 2000, limit: 1024)) {
            try await client.connection.send(.text(String(repeating: "é", count: 1000)))
        }
        try await client.connection.send(.binary(Data(count: 1024)))
        #expect(try await server.nextMessage() == .binary([UInt8](repeating: 0, count: 1024)))

        server.reset()
        #expect(await client.rest() == [.ended(.receiveFailed)])
        await peer.stop()
    }

    @Test func sendThatCannotCompleteThrowsWhenTheConnectionBreaks() async throws {
        var peer = try ScriptedPeer()
        var client = ClientProbe(url: peer.url())
        let server = await peer.accept()
        try await server.open()
        #expect(await client.next() == .opened(nil))

        // The peer stops reading, so TCP flow control holds most of 16 MiB back: the send cannot complete.
        server.tcp.pauseReading()
        let connection = client.connection
        async let sent: Void = connection.send(.binary(Data(count: 16 << 20)))
        server.reset()
        // Whether the reset lands before or during the write decides the error; it never returns normally.
        do {
            try await sent
            Issue.record("a send that could not be written returned normally")
        } catch let error as WebSocketSendError {
            #expect(error == .connectionFailed || error == .notOpen)
        }
        #expect(await client.rest() == [.ended(.receiveFailed)])
        await peer.stop()
    }
}
#endif
