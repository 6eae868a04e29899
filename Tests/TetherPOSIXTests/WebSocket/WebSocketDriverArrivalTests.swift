#if os(Linux)
import Synchronization
import Testing
@testable import TetherPOSIX
import TetherWire

/// What the driver notes of arriving bytes for the heartbeat (`WebSocketDriver.inboundArrival(now:)`): on a loop with
/// a manual clock, so that every duration is exact; and asked from many tasks at once while frames arrive.
@Suite(.timeLimit(.minutes(1))) struct WebSocketDriverArrivalTests {
    /// The client side: forwards the stream's bytes to the driver and counts the data messages delivered.
    final class Client: WebSocketDriverDelegate, ByteStreamHandler {
        var driver: WebSocketDriver?
        var delivered = 0
        let deliveries: AsyncStream<Int>.Continuation

        init(_ deliveries: AsyncStream<Int>.Continuation) {
            self.deliveries = deliveries
        }

        func received(_ message: BorrowedMessage) -> Bool {
            message.opcode == .text || message.opcode == .binary
        }

        func deliverReceived() {
            self.delivered += 1
            self.deliveries.yield(self.delivered)
        }

        func pongReceived(id: UInt64) {}
        func pongSent(payload: [UInt8]) {}
        func closed(_ closure: WebSocketClosure) {}
        func ended(_ ending: WebSocketEnding, failedPings: [UInt64]) {}
        func flow(_ event: WebSocketFlowEvent) {}

        func received(_ bytes: UnsafeRawBufferPointer, on stream: any ByteStream) {
            self.driver?.received(bytes)
        }

        func ended(_ end: ByteStreamEnd, on stream: any ByteStream) {
            self.driver?.streamEnded()
        }
    }

    struct Pair {
        let loop: EventLoop
        let clock: ManualLoopClock
        let driver: WebSocketDriver
        let server: TCPConnection
        var deliveries: AsyncStream<Int>.AsyncIterator
        /// Kept alive: the driver holds its delegate weakly.
        let client: LoopBound<Client>
    }

    static func pair(tracksArrival: Bool = true) async throws -> Pair {
        let clock = ManualLoopClock()
        let loop = try EventLoop(name: "arrival-test", clock: .manual(clock))
        var accepted = try AcceptedConnections(loop: loop)
        let tcp = try await TCPConnection.connect(
            to: [accepted.address], timeout: .seconds(5), loop: loop)
        let server = await accepted.next()
        let (deliveries, sink) = AsyncStream.makeStream(of: Int.self)
        let (client, driver) = try await loop.submit {
            let client = LoopBound(Client(sink), loop: loop)
            let driver = WebSocketDriver(
                stream: tcp, engine: WebSocketConnection(.init(role: .client)), delegate: client.value,
                tracksArrival: tracksArrival)
            client.value.driver = driver
            tcp.setStreamHandler(client.value)
            return (client, driver)
        }
        try await loop.submit { server.setHandler(Ignoring()) }
        await accepted.listener.close()
        return Pair(
            loop: loop, clock: clock, driver: driver, server: server, deliveries: deliveries.makeAsyncIterator(),
            client: client)
    }

    final class Flag: Sendable {
        private let value = Atomic(false)
        var isSet: Bool { self.value.load(ordering: .relaxed) }
        func set() { self.value.store(true, ordering: .relaxed) }
    }

    final class Ignoring: TCPConnectionHandler {
        func received(_ bytes: UnsafeRawBufferPointer, on connection: TCPConnection) {}
        func ended(_ end: TCPConnection.End, on connection: TCPConnection) {}
    }

    /// Returns once the loop has finished handling the read whose first message was just delivered: a delivery is
    /// made from inside that read's handling, and the driver decodes what came behind the message after it.
    static func readHandled(on loop: EventLoop) async throws {
        try await loop.submit {}
    }

    static func frame(_ payload: [UInt8]) -> [UInt8] {
        var encoder = WebSocketEncoder(role: .server)
        var bytes: [UInt8] = []
        encoder.binary(payload, into: &bytes)
        return bytes
    }

    @Test func timesAreTheLoopClocksAndAFrameIsInProgressUntilItsLastByte() async throws {
        var pair = try await Self.pair()
        defer { pair.loop.shutdown() }
        let driver = pair.driver
        pair.clock.advance(by: .seconds(1))
        let opened = try #require(driver.inboundArrival(now: pair.loop.now))
        #expect(opened == .init(
            framesCompleted: 0, frameInProgress: false, sinceLastByte: .seconds(1), sinceLastFrameCompleted: nil))

        let second = Self.frame(Array(repeating: 2, count: 1_000))
        try await pair.server.send(Self.frame([1]) + second.prefix(300))
        #expect(await pair.deliveries.next() == 1)
        try await Self.readHandled(on: pair.loop)
        pair.clock.advance(by: .milliseconds(250))
        let arriving = try #require(driver.inboundArrival(now: pair.loop.now))
        #expect(arriving == .init(
            framesCompleted: 1, frameInProgress: true, sinceLastByte: .milliseconds(250),
            sinceLastFrameCompleted: .milliseconds(250)))

        try await pair.server.send(Array(second.dropFirst(300)))
        #expect(await pair.deliveries.next() == 2)
        try await Self.readHandled(on: pair.loop)
        pair.clock.advance(by: .milliseconds(40))
        let whole = try #require(driver.inboundArrival(now: pair.loop.now))
        #expect(whole == .init(
            framesCompleted: 2, frameInProgress: false, sinceLastByte: .milliseconds(40),
            sinceLastFrameCompleted: .milliseconds(40)))
    }

    @Test func aPongDecodedIsNamedBeforeItsOwnerHandlesIt() async throws {
        var pair = try await Self.pair()
        defer { pair.loop.shutdown() }
        let driver = pair.driver
        #expect(driver.inboundArrival(now: pair.loop.now)?.latestPongID == nil)
        #expect(try await pair.loop.submit { driver.sendPing(id: 7) })
        // The pong for ping 7 (its 8-byte big-endian payload) behind a data frame, in one write.
        var encoder = WebSocketEncoder(role: .server)
        var pong: [UInt8] = []
        try encoder.pong([0, 0, 0, 0, 0, 0, 0, 7], into: &pong)
        try await pair.server.send(Self.frame([1, 2, 3]) + pong)
        #expect(await pair.deliveries.next() == 1)
        try await Self.readHandled(on: pair.loop)
        pair.clock.advance(by: .milliseconds(30))
        let arrival = try #require(driver.inboundArrival(now: pair.loop.now))
        #expect(arrival.framesCompleted == 2 && arrival.latestPongID == 7)
        #expect(arrival.sinceLatestPong == .milliseconds(30))  // when the read that brought it came

        // Bytes without a pong move the latest byte, not the pong's time.
        pair.clock.advance(by: .milliseconds(10))
        try await pair.server.send(Self.frame([4]))
        #expect(await pair.deliveries.next() == 2)
        try await Self.readHandled(on: pair.loop)
        let later = try #require(driver.inboundArrival(now: pair.loop.now))
        #expect(later.sinceLastByte == .zero && later.sinceLatestPong == .milliseconds(40))
        #expect(later.latestPongID == 7)
    }

    @Test func aDriverThatDoesNotTrackReadsNoClockAndSaysNothing() async throws {
        let pair = try await Self.pair(tracksArrival: false)
        defer { pair.loop.shutdown() }
        #expect(pair.driver.inboundArrival(now: pair.loop.now) == nil)
    }

    @Test func askedFromManyTasksWhileFramesArriveTheCountOnlyGrows() async throws {
        var pair = try await Self.pair()
        defer { pair.loop.shutdown() }
        let driver = pair.driver
        let loop = pair.loop
        let done = Flag()
        let askers = (0..<8).map { _ in
            Task {
                var last = 0
                var grew = true
                while !done.isSet {
                    guard let arrival = driver.inboundArrival(now: loop.now) else { continue }
                    grew = grew && arrival.framesCompleted >= last
                    last = arrival.framesCompleted
                    await Task.yield()
                }
                return grew
            }
        }
        for index in 0..<200 {
            try await pair.server.send(Self.frame(Array(repeating: UInt8(truncatingIfNeeded: index), count: 300)))
        }
        while let delivered = await pair.deliveries.next(), delivered < 200 {}
        done.set()
        for asker in askers {
            #expect(await asker.value)
        }
        #expect(driver.inboundArrival(now: loop.now)?.framesCompleted == 200)
    }
}
#endif
