#if os(Linux)
import Testing
@testable import TetherCLI
#if canImport(Glibc)
import Glibc
#endif

@Suite struct TCPCountersTests {
    @Test func theKernelsCountersAccountForEveryByteOnALoopbackConnection() throws {
        let (writer, reader, writerPort, readerPort) = try LoopbackSockets.pair()
        defer {
            close(writer)
            close(reader)
        }
        // Differences: the connecting side's `tcpi_bytes_acked` may count its SYN.
        let before = try #require(TCPCounters.of(writer))
        let bytes = [UInt8](repeating: 7, count: 10_000)
        #expect(bytes.withUnsafeBytes { send(writer, $0.baseAddress, $0.count, 0) } == 10_000)
        var taken = [UInt8](repeating: 0, count: 4_000)
        #expect(taken.withUnsafeMutableBytes { recv(reader, $0.baseAddress, $0.count, Int32(MSG_WAITALL)) } == 4_000)
        // The 10,000 bytes went as one segment (loopback's MSS is about 64 KiB): the rest is in the reader's queue.
        var readable = pollfd(fd: reader, events: Int16(POLLIN), revents: 0)
        #expect(poll(&readable, 1, 5_000) == 1)
        let written = try #require(TCPCounters.of(writer))
        let read = try #require(TCPCounters.of(reader))
        #expect(written.written - before.written == 10_000)
        #expect(read.read == 4_000 && read.received == 10_000 && read.unread == 6_000, "\(read)")
        #expect(TCPCounters.descriptor(localPort: writerPort, remotePort: readerPort) == writer)
        #expect(TCPCounters.descriptor(localPort: readerPort, remotePort: writerPort) == reader)
        #expect(TCPCounters.of(-1) == nil)
    }
}
#endif
