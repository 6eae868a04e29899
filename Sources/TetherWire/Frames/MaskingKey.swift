/// The 4-byte masking key of a frame (RFC 6455 §5.3).
///
/// `value` holds the key bytes in wire order, the first byte in the most significant position
/// (so `MaskingKey(value: 0x37FA213D)` is the key `37 fa 21 3d` of RFC 6455 §5.7).
public struct MaskingKey: Hashable, Sendable {
    /// The key bytes, first byte most significant.
    public var value: UInt32

    public init(value: UInt32) {
        self.value = value
    }

    /// The key from its four bytes in wire order.
    public init(_ b0: UInt8, _ b1: UInt8, _ b2: UInt8, _ b3: UInt8) {
        self.value = UInt32(b0) << 24 | UInt32(b1) << 16 | UInt32(b2) << 8 | UInt32(b3)
    }

    /// The key bytes in wire order.
    public var bytes: [UInt8] {
        [UInt8(self.value >> 24), UInt8(truncatingIfNeeded: self.value >> 16),
         UInt8(truncatingIfNeeded: self.value >> 8), UInt8(truncatingIfNeeded: self.value)]
    }

    /// XORs `buffer` in place with the key, as if `buffer` started at payload offset `offset`.
    ///
    /// Works a machine word at a time on aligned memory; only up to 7 leading and 7 trailing bytes are handled one
    /// by one, by rotating the key, never with `%`. Masking and unmasking are the same operation.
    public func apply(to buffer: UnsafeMutableRawBufferPointer, offset: Int = 0) {
        guard let pointer = buffer.baseAddress, buffer.count > 0 else { return }
        self.mask(from: UnsafeRawPointer(pointer), to: pointer, count: buffer.count, offset: offset)
    }

    /// Writes `source` XORed with the key into `destination` (the same count), as if `source` started at payload
    /// offset `offset`: a copy and a mask in one pass over the bytes, how an encoder puts a payload into its frame.
    /// The two buffers must not overlap (`apply(to:offset:)` masks in place).
    public func apply(copying source: UnsafeRawBufferPointer, to destination: UnsafeMutableRawBufferPointer,
                      offset: Int = 0) {
        precondition(source.count == destination.count, "a masked copy needs a destination of the source's size")
        guard let to = destination.baseAddress, let from = source.baseAddress, source.count > 0 else { return }
        self.mask(from: from, to: to, count: source.count, offset: offset)
    }

    /// The one masking loop: `count` bytes from `from`, XORed, to `to` (the same address, or memory that does not
    /// overlap). Works a machine word at a time on `to`'s aligned words (reading `from` unaligned, which costs
    /// nothing extra on the machines Swift runs on); only up to 7 leading and 7 trailing bytes are handled one by
    /// one, by rotating the key, never with `%`.
    @inline(__always)
    private func mask(from: UnsafeRawPointer, to: UnsafeMutableRawPointer, count: Int, offset: Int) {
        var from = from
        var to = to
        var remaining = count
        // The key rotated so that its most significant byte masks the next byte.
        var key = self.value.rotatedLeft(by: (offset & 3) &* 8)
        while remaining > 0, UInt(bitPattern: to) & 7 != 0 {
            to.storeBytes(of: from.load(as: UInt8.self) ^ UInt8(key >> 24), as: UInt8.self)
            key = key.rotatedLeft(by: 8)
            to += 1
            from += 1
            remaining -= 1
        }
        // The key bytes in memory order, twice: XOR with this word masks 8 bytes at once.
        let half = UInt64(UInt32(bigEndian: key))
        let word = half | half << 32
        let wordCount = remaining >> 3
        var index = 0
        while index < wordCount {
            let byteOffset = index &<< 3
            let masked = from.loadUnaligned(fromByteOffset: byteOffset, as: UInt64.self) ^ word
            to.storeBytes(of: masked, toByteOffset: byteOffset, as: UInt64.self)
            index &+= 1
        }
        to += wordCount &<< 3
        from += wordCount &<< 3
        remaining &= 7
        while remaining > 0 {
            to.storeBytes(of: from.load(as: UInt8.self) ^ UInt8(key >> 24), as: UInt8.self)
            key = key.rotatedLeft(by: 8)
            to += 1
            from += 1
            remaining -= 1
        }
    }
}

extension UInt32 {
    @inline(__always)
    fileprivate func rotatedLeft(by bits: Int) -> UInt32 {
        let shift = UInt32(truncatingIfNeeded: bits) & 31
        return shift == 0 ? self : (self << shift) | (self >> (32 - shift))
    }
}
