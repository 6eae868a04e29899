import Foundation
import Testing
@testable import TetherCLI

@Suite struct ResidentMemoryTests {
    @Test func residentMemoryIsSampledUntilStopped() throws {
        let memory = try #require(ResidentMemory())
        #expect(memory.baseline > 0)
        // Written, so resident. Large beside what the parallel suite frees meanwhile: the resident size is the whole
        // process's, and other tests' memory going away lowered an 8 MiB buffer's growth below 4 MiB once.
        // memset, not Array(repeating:): a debug build fills an array element by element, seconds for 64 MiB.
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: 64 << 20, alignment: 16)
        defer { buffer.deallocate() }
        memset(buffer, 1, 64 << 20)
        #expect(memory.now > 0)
        #expect(memory.peakGrowth > 32 << 20)
        memory.stop()
        memory.stop()  // idempotent
    }

    @Test func byteCountsAreShownInKiBOrMiB() {
        #expect(byteCountText(1_048_795) == "1.0 MiB")
        #expect(byteCountText(570_000) == "556 KiB")
        #expect(byteCountText(64 << 20) == "64.0 MiB")
    }
}
