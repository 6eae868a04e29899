import Testing
@testable import TetherCLI

@Suite struct ResidentMemoryTests {
    @Test func residentMemoryIsSampledUntilStopped() throws {
        let memory = try #require(ResidentMemory())
        #expect(memory.baseline > 0)
        let buffer = [UInt8](repeating: 1, count: 8 << 20)  // written, so resident
        #expect(memory.now > 0)
        #expect(memory.peakGrowth > 4 << 20)
        memory.stop()
        memory.stop()  // idempotent
        #expect(buffer.count == 8 << 20)
    }

    @Test func byteCountsAreShownInKiBOrMiB() {
        #expect(byteCountText(1_048_795) == "1.0 MiB")
        #expect(byteCountText(570_000) == "556 KiB")
        #expect(byteCountText(64 << 20) == "64.0 MiB")
    }
}
