/// A small, fast, seedable random number generator (SplitMix64, Steele, Lea and Flood 2014).
///
/// For reproducible tests and benchmarks. Not cryptographically secure; production uses
/// `SystemRandomNumberGenerator`.
public struct SplitMix64: RandomNumberGenerator, Equatable, Hashable, Sendable {
    public private(set) var state: UInt64

    /// - Parameter seed: any value; the same seed always yields the same sequence.
    public init(seed: UInt64) {
        self.state = seed
    }

    public mutating func next() -> UInt64 {
        self.state &+= 0x9E37_79B9_7F4A_7C15
        var z = self.state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
