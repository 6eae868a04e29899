import Testing
import TetherCore

@Suite struct SplitMix64Tests {
    @Test func matchesTheReferenceOutputForSeedZero() {
        var random = SplitMix64(seed: 0)
        #expect(random.next() == 0xE220_A839_7B1D_CDAF)
        #expect(random.next() == 0x6E78_9E6A_A1B9_65F4)
        #expect(random.next() == 0x06C4_5D18_8009_454F)
    }

    @Test func sameSeedSameSequenceDifferentSeedDifferentSequence() {
        var a = SplitMix64(seed: 99)
        var b = SplitMix64(seed: 99)
        var c = SplitMix64(seed: 100)
        let first = (0..<4).map { _ in a.next() }
        #expect(first == (0..<4).map { _ in b.next() })
        #expect(first != (0..<4).map { _ in c.next() })
    }
}
