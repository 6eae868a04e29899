/// A compressed message that inflates to far more than it weighs, for tests of the inflation bound: segments of
/// 1 MiB of zeros, each compressed on its own (so each is valid anywhere in a raw DEFLATE stream) and repeated.
/// About 1 KiB on the wire per MiB inflated: 1 GiB inflated is about 1 MB.
package enum DeflateBomb {
    /// The payload of a compressed message (no `00 00 ff ff` tail) that inflates to `inflatedMebibytes` MiB of
    /// zeros with any window of 9...15 bits.
    package static func payload(inflatedMebibytes: Int) -> [UInt8] {
        let segment = Self.segment()
        var payload: [UInt8] = []
        payload.reserveCapacity(segment.count * inflatedMebibytes)
        for _ in 0..<inflatedMebibytes { payload += segment }
        return payload
    }

    /// 1 MiB of zeros compressed by a fresh context with a 512-byte window and flushed (ending in 00 00 ff ff).
    private static func segment() -> [UInt8] {
        let compressor = DeflateCompressor(windowBits: 9, noContextTakeover: true, level: 9)
        var segment: [UInt8] = []
        let zeros = [UInt8](repeating: 0, count: 1 << 20)
        zeros.withUnsafeBytes { try! compressor.compress($0, appendingTo: &segment) }
        return segment + [0, 0, 0xFF, 0xFF]
    }
}
