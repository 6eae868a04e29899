/// Test helpers: hex literals and a seeded random source.

/// Bytes from a hex string; spaces are ignored ("81 05 48 65").
func hex(_ text: String) -> [UInt8] {
    let digits = Array(text.utf8.filter { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\n") })
    precondition(digits.count % 2 == 0, "odd number of hex digits")
    return stride(from: 0, to: digits.count, by: 2).map { index in
        UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16)!
    }
}

/// The lowercase hex of `bytes`, no separators.
func hexString(_ bytes: some Sequence<UInt8>) -> String {
    bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
}

/// A deterministic generator (SplitMix64) so that randomized tests are reproducible.
struct SeededRandom: RandomNumberGenerator, Sendable {
    var state: UInt64

    init(seed: UInt64) {
        self.state = seed
    }

    mutating func next() -> UInt64 {
        self.state &+= 0x9E37_79B9_7F4A_7C15
        var z = self.state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A generator that returns fixed values, for masking keys in RFC examples.
struct FixedRandom: RandomNumberGenerator, Sendable {
    var value: UInt64

    mutating func next() -> UInt64 { self.value }
}
