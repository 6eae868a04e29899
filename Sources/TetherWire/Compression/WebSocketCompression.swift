/// permessage-deflate as one connection's engine uses it: what the handshake agreed, and this side's own choices.
public struct WebSocketCompression: Equatable, Hashable, Sendable {
    /// What the handshake agreed (window bits and context takeover of both sides).
    public var parameters: PerMessageDeflateParameters
    /// Data messages of at least this many bytes are compressed, smaller ones are sent as they are (a send may
    /// say otherwise with `MessageCompression`). See `standardThreshold`.
    public var threshold: Int
    /// zlib's memory level for what this side compresses, 1...9: 8 (zlib's default) costs 128 KiB of state beside
    /// the window, each step down halves that at some cost in ratio.
    public var memoryLevel: Int

    /// - Parameters:
    ///   - parameters: what the handshake agreed.
    ///   - threshold: the smallest message compressed by default; negative values count as 0.
    ///   - memoryLevel: zlib's memory level for compressing, clamped to 1...9.
    public init(
        parameters: PerMessageDeflateParameters, threshold: Int = Self.standardThreshold, memoryLevel: Int = 8
    ) {
        self.parameters = parameters
        self.threshold = max(0, threshold)
        self.memoryLevel = min(9, max(1, memoryLevel))
    }

    /// 128 bytes: below it DEFLATE's block header and Huffman tables cost about what the message saves (the
    /// `tether-bench deflate` figures are in docs/compression.md), and the compressor's state is never allocated
    /// on a connection that only sends small messages.
    public static let standardThreshold = 128

    /// The longest a message of `size` bytes can be once a peer compressed it: data that does not compress grows
    /// (zlib's stored blocks add 5 bytes per 64 KiB; a fixed-Huffman block, which another deflater may choose, up to
    /// an eighth), so the limit on a compressed message as received leaves that room, and a message within
    /// `maximumMessageSize` is never refused for what its compression added. How it inflates is bounded apart.
    package static func largestCompressedSize(ofMessage size: Int) -> Int {
        let (room, overflow) = (size / 8 + 64).addingReportingOverflow(size)
        return overflow ? .max : room
    }
}

/// Whether one message is compressed, when the connection negotiated permessage-deflate.
public enum MessageCompression: Equatable, Hashable, Sendable {
    /// Compressed when at least the connection's threshold (the default).
    case automatic
    /// Compressed whatever its size.
    case always
    /// Sent as it is (for data already compressed, such as images).
    case never
}
