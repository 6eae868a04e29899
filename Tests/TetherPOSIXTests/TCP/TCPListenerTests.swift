import Glibc
import Testing
@testable import TetherPOSIX

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
        let inode = try #require(socketInode(of: listener.descriptor))
        #expect(openSocketInodes().contains(inode))
        await listener.close()
        // Kernel truth: the socket is gone, so the port refuses connections. (Connecting to it here
        // could reach a listener of a test running in parallel that was given the same port.)
        #expect(!openSocketInodes().contains(inode))
        await listener.close()  // idempotent
        #expect(try await loop.submit { loop.ownedDescriptorCount } == 2)
    }
}
