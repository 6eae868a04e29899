#if os(Linux)
import Testing
@testable import TetherCLI
#if canImport(Glibc)
import Glibc
#endif

@Suite struct LineReaderTests {
    @Test func readsTheDescriptorOnlyAsFarAsTheLinesTakenNeed() async throws {
        var pipeEnds: [Int32] = [0, 0]
        try #require(pipe(&pipeEnds) == 0)
        defer { close(pipeEnds[0]) }
        let lines = (0..<2_000).map { "line \($0)" }
        let text = Array((lines.joined(separator: "\n") + "\n").utf8)  // about 20 KB: the pipe holds it all
        #expect(text.withUnsafeBytes { write(pipeEnds[1], $0.baseAddress, $0.count) } == text.count)
        close(pipeEnds[1])
        let reader = LineReader(descriptor: pipeEnds[0], chunkSize: 1024)
        #expect(await reader.next() == "line 0")
        // One read of 1 KiB at most: the rest is still in the pipe, where it makes the writer wait.
        var unread: Int32 = 0
        #expect(ioctl(pipeEnds[0], UInt(FIONREAD), &unread) == 0)
        #expect(Int(unread) >= text.count - 1024)
        var rest: [String] = []
        for await line in reader.lines() { rest.append(line) }
        #expect(rest == Array(lines.dropFirst()))
    }

    @Test func crlfAndALastLineWithoutNewlineAreLines() async throws {
        var pipeEnds: [Int32] = [0, 0]
        try #require(pipe(&pipeEnds) == 0)
        defer { close(pipeEnds[0]) }
        let text = Array("one\r\n\ntwo".utf8)
        #expect(text.withUnsafeBytes { write(pipeEnds[1], $0.baseAddress, $0.count) } == text.count)
        close(pipeEnds[1])
        var lines: [String] = []
        for await line in LineReader(descriptor: pipeEnds[0]).lines() { lines.append(line) }
        #expect(lines == ["one", "", "two"])
    }
}
#endif
