#if os(Linux)
import Glibc
import Synchronization

/// The source of masking keys for `SocketConnection`: the kernel's CSPRNG (`getrandom`, through glibc's
/// `arc4random_buf`), read 4 KiB at a time into a process-wide pool. `SystemRandomNumberGenerator` makes one
/// `getrandom` system call per key, that is per frame sent; this makes one per 512 keys (0.002 per 64-byte round trip,
/// where 64 keys a refill still showed as 0.02 system calls per round trip in scripts/bench-counts.sh). Every key is
/// still fresh kernel randomness, used once, as RFC 6455 §5.3 asks ("derived from a strong source of entropy").
struct MaskingEntropy: RandomNumberGenerator {
    /// Keys per refill of the pool.
    static let wordsPerRefill = 512
    private static let pool = Mutex(Pool())

    mutating func next() -> UInt64 {
        Self.pool.withLock { $0.next() }
    }

    private struct Pool {
        private var words = [UInt64](repeating: 0, count: MaskingEntropy.wordsPerRefill)
        private var used = MaskingEntropy.wordsPerRefill

        mutating func next() -> UInt64 {
            if self.used == self.words.count {
                self.words.withUnsafeMutableBytes { arc4random_buf($0.baseAddress!, $0.count) }
                self.used = 0
            }
            defer {
                self.words[self.used] = 0  // a key handed out does not stay in memory
                self.used += 1
            }
            return self.words[self.used]
        }
    }
}
#endif
