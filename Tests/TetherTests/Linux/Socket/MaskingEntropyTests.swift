#if os(Linux)
import Testing
@testable import Tether

/// Masking keys come from a pool refilled from the kernel `MaskingEntropy.wordsPerRefill` words at a time.
@Suite struct MaskingEntropyTests {
    @Test func keysAcrossSeveralRefillsAreFreshAndNeverRepeat() {
        var entropy = MaskingEntropy()
        let keys = (0..<(3 * MaskingEntropy.wordsPerRefill + 8)).map { _ in entropy.next() }
        // A pool that was not refilled would hand out the zeros left by used keys.
        #expect(!keys.contains(0))
        #expect(Set(keys).count == keys.count)
    }

    @Test func concurrentDrawsNeverShareAKey() async {
        let keys = await withTaskGroup(of: [UInt64].self) { group in
            for _ in 0..<4 {
                group.addTask {
                    var entropy = MaskingEntropy()
                    return (0..<100).map { _ in entropy.next() }
                }
            }
            return await group.reduce(into: []) { $0 += $1 }
        }
        #expect(keys.count == 400 && Set(keys).count == 400)
    }
}
#endif
