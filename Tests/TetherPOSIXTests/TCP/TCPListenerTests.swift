#if os(Linux)
import Glibc
import Synchronization
import Testing
@testable import TetherPOSIX
import TetherTestSupport

@Suite(.timeLimit(.minutes(1)))
struct TCPListenerTests {
    @Test func bindsAnEphemeralLoopbackPort() throws {
        let loop = try EventLoop(name: "test-bind")
        defer { loop.shutdown() }
        let listener = try TCPListener.bind(loop: loop)
        #expect(listener.address.host == "127.0.0.1")
        #expect(listener.port > 0)
        #expect(listener.description == "TCPListener(127.0.0.1:\(listener.port))")
        listener.close()
    }

    @Test func bindingAPortInUseFailsWithAddressInUse() throws {
        let loop = try EventLoop(name: "test-inuse")
        defer { loop.shutdown() }
        let first = try TCPListener.bind(loop: loop)
        #expect(throws: SocketError.addressInUse) { try TCPListener.bind(port: first.port, loop: loop) }
        first.close()
    }

    @Test func bindRejectsHostNamesAndBadPortsWithTypedErrors() throws {
        let loop = try EventLoop(name: "test-badbind")
        defer { loop.shutdown() }
        #expect(throws: SocketError.nameResolution(code: EAI_NONAME)) {
            try TCPListener.bind(host: "localhost", loop: loop)
        }
        #expect(throws: SocketError.nameResolution(code: EAI_SERVICE)) {
            try TCPListener.bind(port: 70_000, loop: loop)
        }
        #expect(loop.ownedDescriptorCount == 2)
    }

    @Test func acceptsManyConnectionsAndHandsEachOutOnTheLoop() async throws {
        let loop = try EventLoop(name: "test-accept")
        defer { loop.shutdown() }
        let listener = try TCPListener.bind(loop: loop)
        let (stream, continuation) = AsyncStream.makeStream(of: Bool.self)
        listener.start { connection in
            continuation.yield(loop.inEventLoop)
            connection.close()
        }
        var clients: [TCPConnection] = []
        for _ in 0..<20 {
            clients.append(try await connect(to: [listener.address], loop: loop))
        }
        var onLoop: [Bool] = []
        for await flag in stream {
            onLoop.append(flag)
            if onLoop.count == 20 { break }
        }
        #expect(onLoop == Array(repeating: true, count: 20))
        clients.forEach { $0.close() }
        await listener.close()
    }

    @Test func closeReleasesTheListeningSocket() async throws {
        let loop = try EventLoop(name: "test-closedlistener")
        defer { loop.shutdown() }
        let listener = try startEchoServer(loop: loop)
        let inode = try #require(SocketInventory.socketInode(of: listener.descriptor))
        #expect(SocketInventory.openSocketInodes().contains(inode))
        await listener.close()
        // Kernel truth: the socket is gone, so the port refuses connections. (Connecting to it here
        // could reach a listener of a test running in parallel that was given the same port.)
        #expect(!SocketInventory.openSocketInodes().contains(inode))
        await listener.close()  // idempotent
        #expect(try await loop.submit { loop.ownedDescriptorCount } == 2)
    }

    // MARK: Out of descriptors

    @Test func outOfDescriptorsAcceptingPausesForTheBackoffThenAcceptsTheWaitingConnection() async throws {
        let loop = try EventLoop(name: "test-emfile")
        defer { loop.shutdown() }
        let listener = try TCPListener.bind(loop: loop)
        let log = AcceptLog(refusing: 3)
        listener.setAcceptGate { log.gate() }
        let (accepted, acceptedSink) = AsyncStream.makeStream(of: TCPConnection.self)
        listener.start(
            onAccept: { connection in acceptedSink.yield(connection) },
            onDescriptorsExhausted: { log.exhausted(freedOne: false) })

        var client = try await ConnectionProbe(try await connect(to: [listener.address], loop: .shared))
        var iterator = accepted.makeAsyncIterator()
        let connection = try #require(await iterator.next())
        connection.write(Array("hi".utf8))
        #expect(await client.read(count: 2) == Array("hi".utf8))  // the client is served once accepted

        let (refusals, exhaustedCalls, acceptedAt) = log.snapshot
        #expect(refusals.count == 3 && exhaustedCalls == 3)  // the owner was asked each time
        // Each retry waited out the back-off: no busy loop while the connection waits in the backlog.
        for (earlier, later) in zip(refusals, refusals.dropFirst() + [try #require(acceptedAt)]) {
            #expect(later - earlier >= TCPListener.acceptBackoff)
        }
        connection.close()
        client.connection.close()
        await listener.close()
    }

    @Test func outOfDescriptorsAnOwnerThatFreedOneGetsARetryAtOnce() async throws {
        let loop = try EventLoop(name: "test-emfile-shed")
        defer { loop.shutdown() }
        let listener = try TCPListener.bind(loop: loop)
        let log = AcceptLog(refusing: 1)
        listener.setAcceptGate { log.gate() }
        let (accepted, acceptedSink) = AsyncStream.makeStream(of: TCPConnection.self)
        listener.start(
            onAccept: { connection in acceptedSink.yield(connection) },
            onDescriptorsExhausted: { log.exhausted(freedOne: true) })

        let client = try await connect(to: [listener.address], loop: .shared)
        var iterator = accepted.makeAsyncIterator()
        let connection = try #require(await iterator.next())
        let (refusals, exhaustedCalls, acceptedAt) = log.snapshot
        #expect(refusals.count == 1 && exhaustedCalls == 1)
        // Retried in the same turn of the loop, without the back-off.
        #expect(try #require(acceptedAt) - refusals[0] < TCPListener.acceptBackoff)
        connection.close()
        client.close()
        await listener.close()
    }

    @Test func aListenerPausedOutOfDescriptorsIsClosedWhenItsLoopShutsDown() async throws {
        let loop = try EventLoop(name: "test-emfile-stop")
        let listener = try TCPListener.bind(loop: loop)
        let log = AcceptLog(refusing: .max)
        listener.setAcceptGate { log.gate() }
        listener.start(onAccept: { $0.close() })
        let client = try await connect(to: [listener.address], loop: .shared)
        var refusals = log.refusals.makeAsyncIterator()
        _ = await refusals.next()  // now paused

        loop.shutdown()
        #expect(loop.ownedDescriptorCount == 0)  // the listening socket too, though it was out of epoll
        client.close()
        await listener.close()  // idempotent, with the loop gone
    }
}

/// An accept gate that refuses the first attempts with `EMFILE`, as if out of descriptors, and logs
/// the refusals, the owner's `onDescriptorsExhausted` calls and the first accept. Loop thread.
private final class AcceptLog: Sendable {
    private struct State {
        var refuse: Int
        var refusals: [ContinuousClock.Instant] = []
        var exhaustedCalls = 0
        var acceptedAt: ContinuousClock.Instant?
    }

    private let state: Mutex<State>
    let refusals: AsyncStream<ContinuousClock.Instant>
    private let sink: AsyncStream<ContinuousClock.Instant>.Continuation

    init(refusing count: Int) {
        self.state = Mutex(State(refuse: count))
        (self.refusals, self.sink) = AsyncStream.makeStream(of: ContinuousClock.Instant.self)
    }

    func gate() -> Int32? {
        let now = ContinuousClock.now
        let refused = self.state.withLock { state in
            guard state.refuse > 0 else {
                if state.acceptedAt == nil { state.acceptedAt = now }
                return false
            }
            state.refuse -= 1
            state.refusals.append(now)
            return true
        }
        if refused { self.sink.yield(now) }
        return refused ? EMFILE : nil
    }

    func exhausted(freedOne: Bool) -> Bool {
        self.state.withLock { $0.exhaustedCalls += 1 }
        return freedOne
    }

    var snapshot: (refusals: [ContinuousClock.Instant], exhaustedCalls: Int, acceptedAt: ContinuousClock.Instant?) {
        self.state.withLock { ($0.refusals, $0.exhaustedCalls, $0.acceptedAt) }
    }
}
#endif
