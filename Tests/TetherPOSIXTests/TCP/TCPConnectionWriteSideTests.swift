#if os(Linux)
import Dispatch
import Glibc
import Synchronization
import Testing
@testable import TetherPOSIX

/// The write side is shared by every writing thread: bytes go to the kernel on the caller's thread when nothing
/// is queued, each write stays contiguous on the wire, and a sealing write is the last one.
@Suite(.timeLimit(.minutes(1)))
struct TCPConnectionWriteSideTests {
    @Test func sendCompletesOnTheCallersThreadWhileTheLoopIsBusy() async throws {
        let loop = try EventLoop(name: "test-direct")
        defer { loop.shutdown() }
        var accepted = try AcceptedConnections(loop: loop)
        let client = try await connect(to: [accepted.address], loop: loop)
        var server = try await ConnectionProbe(await accepted.next())
        // Hold the loop thread until the send has returned: a send that needed the loop could not return.
        let release = DispatchSemaphore(value: 0)
        let holding = DispatchSemaphore(value: 0)
        loop.execute {
            holding.signal()
            release.wait()
        }
        holding.wait()
        try await client.send(Array("direct".utf8))
        release.signal()
        #expect(await server.read(count: 6) == Array("direct".utf8))
        client.close()
        #expect(await server.readToEnd().end == .endOfStream)
        await accepted.listener.close()
    }

    @Test func aDrainWaiterRunsOnceThePeerHasReadTheQueueDownToItsLevel() async throws {
        let loop = try EventLoop(name: "test-drain")
        defer { loop.shutdown() }
        var accepted = try AcceptedConnections(loop: loop)
        let client = try await connect(to: [accepted.address], loop: loop)
        var server = try await ConnectionProbe(await accepted.next())
        // More than loopback's socket buffers hold, so most of it waits in the queue while the peer does not read.
        let size = 32 << 20
        client.write([UInt8](repeating: 7, count: size))
        #expect(client.queuedWriteBytes > 0)
        let (levels, level) = AsyncStream.makeStream(of: Int.self)
        client.whenQueuedWrites(atMost: 0) {
            level.yield(client.queuedWriteBytes)
            level.finish()
        }
        #expect(await server.read(count: size).count == size)
        #expect(await levels.first { _ in true } == 0)
        client.close()
        await accepted.listener.close()
    }

    @Test func aDrainWaiterRunsAtOnceBelowItsLevelAndWhenTheConnectionEnds() async throws {
        let loop = try EventLoop(name: "test-drain-end")
        defer { loop.shutdown() }
        var accepted = try AcceptedConnections(loop: loop)
        let client = try await connect(to: [accepted.address], loop: loop)
        _ = try await ConnectionProbe(await accepted.next())
        let (calls, call) = AsyncStream.makeStream(of: String.self)
        client.whenQueuedWrites(atMost: 0) { call.yield("empty queue") }
        var iterator = calls.makeAsyncIterator()
        #expect(await iterator.next() == "empty queue")
        client.write([UInt8](repeating: 7, count: 32 << 20))
        client.whenQueuedWrites(atMost: 0) { call.yield("ended") }
        client.reset()  // the queue is discarded: the waiter must not wait forever
        #expect(await iterator.next() == "ended")
        await accepted.listener.close()
    }

    @Test func concurrentWritersNeverInterleaveWithinAWrite() async throws {
        let loop = try EventLoop(name: "test-interleave")
        defer { loop.shutdown() }
        var accepted = try AcceptedConnections(loop: loop)
        let client = try await connect(to: [accepted.address], loop: loop)
        var server = try await ConnectionProbe(await accepted.next())
        // Each record is [writer, 4-byte big-endian length, length × writer]. Sizes up to 256 KiB overflow the
        // socket buffer, so some writes are queued while others arrive from other threads.
        let writers = 6
        let recordsPerWriter = 24
        var expectedBytes = 0
        var sizes: [[Int]] = []
        for writer in 0..<writers {
            let row = (0..<recordsPerWriter).map { index in
                (index * 7919 + writer * 104_729) % (256 << 10) + 1
            }
            sizes.append(row)
            expectedBytes += row.reduce(0) { $0 + $1 + 5 }
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<writers {
                let row = sizes[writer]
                group.addTask {
                    for (index, size) in row.enumerated() {
                        let length = withUnsafeBytes(of: UInt32(size).bigEndian) { Array($0) }
                        let record = [UInt8(writer)] + length + [UInt8](repeating: UInt8(writer), count: size)
                        if index.isMultiple(of: 2) {
                            try await client.send(record)
                        } else {
                            client.write(record)  // not awaited: queued behind whatever is pending
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let received = await server.read(count: expectedBytes)
        #expect(received.count == expectedBytes)
        var seen = [Int](repeating: 0, count: writers)
        var offset = 0
        var intact = true
        while offset + 5 <= received.count, intact {
            let writer = Int(received[offset])
            let size = received[(offset + 1)..<(offset + 5)].reduce(0) { $0 << 8 | Int($1) }
            guard writer < writers, seen[writer] < recordsPerWriter, size == sizes[writer][seen[writer]],
                  offset + 5 + size <= received.count,
                  received[(offset + 5)..<(offset + 5 + size)].allSatisfy({ Int($0) == writer }) else {
                intact = false
                break
            }
            seen[writer] += 1
            offset += 5 + size
        }
        #expect(intact, "a record was interleaved with another at offset \(offset)")
        #expect(seen == [Int](repeating: recordsPerWriter, count: writers))
        client.close()
        #expect(await server.readToEnd().end == .endOfStream)
        await accepted.listener.close()
    }

    @Test func aSealingWriteIsTheLastOneOnTheWire() async throws {
        let loop = try EventLoop(name: "test-seal")
        defer { loop.shutdown() }
        var accepted = try AcceptedConnections(loop: loop)
        let client = try await connect(to: [accepted.address], loop: loop)
        var server = try await ConnectionProbe(await accepted.next())
        try await client.send([1, 2], sealing: true)
        await #expect(throws: SocketError.closed) { try await client.send([3]) }
        let refused: SocketError = await withCheckedContinuation { continuation in
            client.write([4]) { error in continuation.resume(returning: error) }
        }
        #expect(refused == .closed)
        // Sealed, not closed: the peer's bytes are still read, and close() still sends FIN after the seal.
        try await server.connection.send([9])
        var clientProbe = try await ConnectionProbe(client)
        #expect(await clientProbe.read(count: 1) == [9])
        client.close()
        #expect(await server.readToEnd() == ([1, 2], .endOfStream))
        await accepted.listener.close()
    }

    @Test func aFailureOnlyWriteReportsNothingWhenWritten() async throws {
        let loop = try EventLoop(name: "test-onfailure")
        defer { loop.shutdown() }
        var accepted = try AcceptedConnections(loop: loop)
        let client = try await connect(to: [accepted.address], loop: loop)
        var server = try await ConnectionProbe(await accepted.next())
        let failures = Mutex<[SocketError]>([])
        client.write([5, 6, 7]) { error in failures.withLock { $0.append(error) } }
        #expect(await server.read(count: 3) == [5, 6, 7])
        try await loop.submit {}  // any deferred report would have run by now
        #expect(failures.withLock { $0 }.isEmpty)
        client.reset()
        let afterReset: SocketError = await withCheckedContinuation { continuation in
            client.write([8]) { error in continuation.resume(returning: error) }
        }
        #expect(afterReset == .closed)
        #expect(await server.readToEnd().end == .failed(.reset))
        await accepted.listener.close()
    }
}
#endif
