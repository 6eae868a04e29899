#if os(Linux)
import Glibc
import Testing
@testable import TetherPOSIX
import TetherTestSupport

@Suite(.timeLimit(.minutes(1)))
struct TCPConnectionTests {
    @Test func clientAndServerExchangeBytesInBothDirections() async throws {
        let loop = try EventLoop(name: "test-echo")
        defer { loop.shutdown() }
        var accepted = try AcceptedConnections(loop: loop)
        let client = try await connect(to: [accepted.address], loop: loop)
        var server = try await ConnectionProbe(await accepted.next())
        var clientProbe = try await ConnectionProbe(client)

        try await client.send(Array("hello from the client".utf8))
        let atServer = await server.read(count: 21)
        #expect(String(decoding: atServer, as: UTF8.self) == "hello from the client")
        try await server.connection.send(Array("hello from the server".utf8))
        let atClient = await clientProbe.read(count: 21)
        #expect(String(decoding: atClient, as: UTF8.self) == "hello from the server")
        #expect(client.remoteAddress == accepted.address)
        #expect(server.connection.remoteAddress == client.localAddress)
        client.close()
        #expect(await server.readToEnd().end == .endOfStream)
        #expect(await clientProbe.readToEnd().end == .closedLocally)
        await accepted.listener.close()
    }

    @Test func eightMebibytesEchoIntactThroughPartialWrites() async throws {
        let loop = try EventLoop(name: "test-large")
        defer { loop.shutdown() }
        let listener = try startEchoServer(loop: loop)
        let client = try await connect(to: [listener.address], loop: loop)
        var probe = try await ConnectionProbe(client)
        let payload = patternBytes(count: 8 << 20)
        let (written, writtenContinuation) = AsyncStream.makeStream(of: Result<Void, SocketError>.self)
        // Queue from the loop so we can see that the kernel did not take it all at once.
        let queuedAfterWrite = try await loop.submit {
            client.write(payload) { writtenContinuation.yield($0) }
            return client.queuedWriteBytes
        }
        #expect(queuedAfterWrite > 0 && queuedAfterWrite < payload.count)
        let echoed = await probe.read(count: payload.count)
        #expect(echoed.count == payload.count)
        expectSameBytes(echoed, payload)
        var results = written.makeAsyncIterator()
        let result = await results.next()
        #expect(throws: Never.self) { try result?.get() }
        client.close()
        #expect(await probe.readToEnd().end == .closedLocally)
        await listener.close()
    }

    @Test func closeFlushesEverythingQueuedBeforeSendingFIN() async throws {
        let loop = try EventLoop(name: "test-flush")
        defer { loop.shutdown() }
        var accepted = try AcceptedConnections(loop: loop)
        let client = try await connect(to: [accepted.address], loop: loop)
        let payload = patternBytes(count: 4 << 20, seed: 7)
        client.write(payload)
        client.close()
        var server = try await ConnectionProbe(await accepted.next())
        let (bytes, end) = await server.readToEnd()
        expectSameBytes(bytes, payload)
        #expect(end == .endOfStream)
        await accepted.listener.close()
    }

    @Test func shutdownOutputHalfClosesAndKeepsReadingUntilThePeerEnds() async throws {
        let loop = try EventLoop(name: "test-halfclose")
        defer { loop.shutdown() }
        let listener = try startEchoServer(loop: loop)
        let client = try await connect(to: [listener.address], loop: loop)
        var probe = try await ConnectionProbe(client)
        let payload = patternBytes(count: 1 << 20, seed: 3)
        client.write(payload)
        client.shutdownOutput()
        await #expect(throws: SocketError.closed) { try await client.send([1]) }
        // The echo server sees end of stream, flushes its echo, then closes.
        let (bytes, end) = await probe.readToEnd()
        expectSameBytes(bytes, payload)
        #expect(end == .endOfStream)
        await listener.close()
    }

    @Test func connectToAPortWithoutListenerIsRefused() async throws {
        let loop = try EventLoop(name: "test-refused")
        defer { loop.shutdown() }
        let reserved = try ReservedPort()
        await #expect(throws: SocketError.refused) {
            try await connect(to: [reserved.address], loop: loop)
        }
    }

    @Test func connectTriesTheNextAddressAfterARefusal() async throws {
        let loop = try EventLoop(name: "test-fallback")
        defer { loop.shutdown() }
        let reserved = try ReservedPort()
        let listener = try startEchoServer(loop: loop)
        let client = try await TCPConnection.connect(
            to: [reserved.address, listener.address],
            timeout: .seconds(5),
            loop: loop
        )
        #expect(client.remoteAddress == listener.address)
        client.close()
        await listener.close()
    }

    @Test func connectTimesOutWhenTheListenerBacklogIsFull() async throws {
        let loop = try EventLoop(name: "test-timeout")
        defer { loop.shutdown() }
        // Never accepting, backlog 0: the kernel completes a connection or two, then drops SYNs.
        let listener = try TCPListener.bind(backlog: 0, loop: loop)
        var held: [TCPConnection] = []
        var outcome: SocketError?
        for _ in 0..<8 where outcome == nil {
            do {
                held.append(try await connect(to: [listener.address], timeout: .milliseconds(200), loop: loop))
            } catch {
                outcome = error
            }
        }
        #expect(outcome == .timedOut)
        #expect(held.count < 8)
        held.forEach { $0.close() }
        await listener.close()
    }

    @Test func cancellingTheConnectingTaskAbandonsTheAttempt() async throws {
        let loop = try EventLoop(name: "test-cancelconnect")
        defer { loop.shutdown() }
        let listener = try TCPListener.bind(backlog: 0, loop: loop)
        var held: [TCPConnection] = []
        // Fill the backlog first (connects that succeed quickly), then cancel one that hangs.
        while true {
            let attempt = Task { try await connect(to: [listener.address], timeout: .milliseconds(150), loop: loop) }
            guard case .success(let connection) = await attempt.result else { break }
            held.append(connection)
        }
        let hanging = Task { try await connect(to: [listener.address], timeout: .seconds(30), loop: loop) }
        try await loop.submit {}  // let the attempt reach the loop
        hanging.cancel()
        let result = await hanging.result
        #expect(throws: SocketError.cancelled) { try result.get() }
        held.forEach { $0.close() }
        await listener.close()
        // Two for the loop itself, nothing else: the cancelled attempt closed its socket.
        #expect(try await loop.submit { loop.ownedDescriptorCount } == 2)
    }

    @Test func resetByThePeerIsReportedAsReset() async throws {
        let loop = try EventLoop(name: "test-reset")
        defer { loop.shutdown() }
        var accepted = try AcceptedConnections(loop: loop)
        let client = try await connect(to: [accepted.address], loop: loop)
        var probe = try await ConnectionProbe(client)
        var server = try await ConnectionProbe(await accepted.next())
        server.connection.reset()
        #expect(await server.readToEnd().end == .closedLocally)
        #expect(await probe.readToEnd().end == .failed(.reset))
        await #expect(throws: SocketError.closed) { try await client.send([1, 2, 3]) }
        await accepted.listener.close()
    }

    @Test func theHandlerSeesExactlyOneEndWhateverHappensAfterwards() async throws {
        let loop = try EventLoop(name: "test-oneend")
        defer { loop.shutdown() }
        var accepted = try AcceptedConnections(loop: loop)
        let client = try await connect(to: [accepted.address], loop: loop)
        var probe = try await ConnectionProbe(client)
        let server = await accepted.next()
        server.reset()
        #expect(await probe.readToEnd().end == .failed(.reset))
        client.close()
        client.reset()
        client.shutdownOutput()
        client.write([1])
        // All of the above hop onto the loop before this runs, and deferred callbacks run before it too.
        try await loop.submit {}
        #expect(try await probe.endsDelivered() == 1)
        await accepted.listener.close()
    }

    @Test func writesAfterCloseFailWithClosedAndAreNeverDropped() async throws {
        let loop = try EventLoop(name: "test-afterclose")
        defer { loop.shutdown() }
        let listener = try startEchoServer(loop: loop)
        let client = try await connect(to: [listener.address], loop: loop)
        client.close()
        await #expect(throws: SocketError.closed) { try await client.send([1]) }
        let result: Result<Void, SocketError> = await withCheckedContinuation { continuation in
            client.write([2]) { continuation.resume(returning: $0) }
        }
        #expect(throws: SocketError.closed) { try result.get() }
        await listener.close()
    }

    @Test func resetDiscardsPendingWritesWithClosed() async throws {
        let loop = try EventLoop(name: "test-resetpending")
        defer { loop.shutdown() }
        let listener = try TCPListener.bind(loop: loop)  // accepts nothing, reads nothing
        let client = try await connect(to: [listener.address], loop: loop)
        let (results, continuation) = AsyncStream.makeStream(of: Result<Void, SocketError>.self)
        try await loop.submit {
            client.write([UInt8](repeating: 0x5A, count: 16 << 20)) { continuation.yield($0) }
            client.reset()
        }
        var iterator = results.makeAsyncIterator()
        let result = await iterator.next()
        #expect(throws: SocketError.closed) { try result?.get() }
        await listener.close()
    }

    @Test func bytesWrittenBeforeTheHandlerIsInstalledAreNotLost() async throws {
        let loop = try EventLoop(name: "test-early")
        defer { loop.shutdown() }
        var accepted = try AcceptedConnections(loop: loop)
        let client = try await connect(to: [accepted.address], loop: loop)
        try await client.send(Array("early".utf8))
        client.close()
        var server = try await ConnectionProbe(await accepted.next())
        #expect(await server.readToEnd() == (Array("early".utf8), .endOfStream))
        await accepted.listener.close()
    }

    @Test func ipv6LoopbackWorks() async throws {
        let loop = try EventLoop(name: "test-ipv6")
        defer { loop.shutdown() }
        let listener = try startEchoServer(host: "::1", loop: loop)
        #expect(listener.address.family == .ipv6)
        let client = try await TCPConnection.connect(
            host: "::1", port: listener.port, timeout: .seconds(5), loop: loop
        )
        var probe = try await ConnectionProbe(client)
        try await client.send([0, 1, 2, 3])
        #expect(await probe.read(count: 4) == [0, 1, 2, 3])
        #expect(client.localAddress?.host == "::1")
        client.close()
        await listener.close()
    }

    @Test func connectByNameResolvesLocalhost() async throws {
        let loop = try EventLoop(name: "test-byname")
        defer { loop.shutdown() }
        let listener = try startEchoServer(loop: loop)
        let client = try await TCPConnection.connect(
            host: "localhost", port: listener.port, timeout: .seconds(5), loop: loop
        )
        var probe = try await ConnectionProbe(client)
        try await client.send([9])
        #expect(await probe.read(count: 1) == [9])
        client.close()
        await listener.close()
    }

    @Test func noDescriptorIsLeftOpenAfterConnectionsEndOrTheLoopShutsDown() async throws {
        let loop = try EventLoop(name: "test-leaks")
        var inodes: [UInt64] = []
        var accepted = try AcceptedConnections(loop: loop)
        inodes.append(try #require(SocketInventory.socketInode(of: accepted.listener.descriptor)))
        // A closed pair, a reset pair, an end-of-stream pair, and a pair still open at shutdown.
        for ending in 0..<4 {
            let client = try await connect(to: [accepted.address], loop: loop)
            var clientProbe = try await ConnectionProbe(client)
            var server = try await ConnectionProbe(await accepted.next())
            inodes.append(try #require(SocketInventory.socketInode(of: client.descriptor)))
            inodes.append(try #require(SocketInventory.socketInode(of: server.connection.descriptor)))
            switch ending {
            case 0:
                client.close()
                _ = await server.readToEnd()
                _ = await clientProbe.readToEnd()
            case 1:
                client.reset()
                _ = await server.readToEnd()
                _ = await clientProbe.readToEnd()
            case 2:
                server.connection.shutdownOutput()
                _ = await clientProbe.readToEnd()  // end of stream: the client closes by itself
                _ = await server.readToEnd()
            default:
                break
            }
        }
        let reserved = try ReservedPort()
        _ = try? await connect(to: [reserved.address], loop: loop)
        loop.shutdown()
        #expect(loop.ownedDescriptorCount == 0)
        let stillOpen = SocketInventory.openSocketInodes().intersection(inodes)
        #expect(stillOpen.isEmpty, "sockets still open: \(stillOpen)")
    }
}

extension TCPConnectionTests {
    @Test func bytesSentBeforeAResetAreDeliveredBeforeTheResetEnd() async throws {
        let loop = try EventLoop(name: "test-datareset")
        defer { loop.shutdown() }
        var accepted = try AcceptedConnections(loop: loop)
        let client = try await connect(to: [accepted.address], loop: loop)
        let server = await accepted.next()
        let payload = patternBytes(count: 100_000, seed: 11)
        try await server.send(payload)
        server.reset()
        // The client installs its handler only now: data and RST are both waiting in the kernel.
        var probe = try await ConnectionProbe(client)
        let (bytes, end) = await probe.readToEnd()
        expectSameBytes(bytes, payload)
        #expect(end == .failed(.reset))
        await accepted.listener.close()
    }
}

extension TCPConnectionTests {
    @Test func pausedReadingHoldsBytesBackUntilResumed() async throws {
        let loop = try EventLoop(name: "test-pause")
        defer { loop.shutdown() }
        var accepted = try AcceptedConnections(loop: loop)
        let client = try await connect(to: [accepted.address], loop: loop)
        var server = try await ConnectionProbe(await accepted.next())
        server.connection.pauseReading()
        try await loop.submit {}  // the pause is in effect once the loop has run it
        try await client.send([1, 2, 3])
        client.close()
        // A round trip through a second connection shows the loop turned while the bytes waited.
        let other = try await connect(to: [accepted.address], loop: loop)
        let otherServer = await accepted.next()
        other.close()
        otherServer.close()
        #expect(try await server.bytesDelivered() == 0)
        #expect(try await server.endsDelivered() == 0)
        server.connection.resumeReading()
        #expect(await server.readToEnd() == ([1, 2, 3], .endOfStream))
        await accepted.listener.close()
    }
}

extension TCPConnectionTests {
    @Test func loopShutdownEndsEveryConnectionWithAHandlerEvenWhilePaused() async throws {
        let loop = try EventLoop(name: "test-pauseshutdown")
        var accepted = try AcceptedConnections(loop: loop)
        let client = try await connect(to: [accepted.address], loop: loop)
        var probe = try await ConnectionProbe(client)
        var server: TCPConnection? = await accepted.next()
        client.pauseReading()
        try await loop.submit {}
        loop.shutdown()
        #expect(await probe.readToEnd().end == .failed(.closed))
        // Left: the accepted socket, which never got a handler and is still referenced here.
        #expect(loop.ownedDescriptorCount == 1)
        #expect(server != nil)
        server = nil  // released after its loop exited: closed by its deinit
        #expect(loop.ownedDescriptorCount == 0)
    }
}

extension TCPConnectionTests {
    @Test func writeCompletionsRunInWriteOrderAndNeverInsideTheWriteCall() async throws {
        let loop = try EventLoop(name: "test-completions")
        defer { loop.shutdown() }
        let listener = try startEchoServer(loop: loop)
        let client = try await connect(to: [listener.address], loop: loop)
        let (stream, continuation) = AsyncStream.makeStream(of: (Int, Bool).self)
        try await loop.submit {
            let insideWrite = LoopBound(false, loop: loop)
            for index in 0..<200 {
                insideWrite.value = true
                // Mixed sizes: some go straight to the kernel, later ones queue behind a big one.
                let size = index == 50 ? 8 << 20 : 100
                client.write([UInt8](repeating: UInt8(index % 256), count: size)) { result in
                    continuation.yield((index, insideWrite.value || (try? result.get()) == nil))
                }
                insideWrite.value = false
            }
        }
        var order: [Int] = []
        for await (index, wrong) in stream {
            #expect(!wrong)
            order.append(index)
            if order.count == 200 { break }
        }
        #expect(order == Array(0..<200))
        client.close()
        await listener.close()
    }

    @Test func connectWithoutAddressesFailsWithATypedError() async throws {
        let loop = try EventLoop(name: "test-noaddress")
        defer { loop.shutdown() }
        await #expect(throws: SocketError.system(operation: "connect", errno: EDESTADDRREQ)) {
            try await connect(to: [], loop: loop)
        }
    }
}
#endif
