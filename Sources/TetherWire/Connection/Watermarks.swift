/// The two levels of a bounded buffer (docs/ARCHITECTURE.md §10): above `high` the side that fills it is pushed
/// back (a socket stops being read, a sender suspends); at or below `low` it goes on. The gap keeps a buffer that
/// hovers around its limit from switching on every byte.
public struct Watermarks: Equatable, Hashable, Sendable {
    /// Above this many bytes, push back.
    public var high: Int
    /// At or below this many bytes, go on. At most `high`.
    public var low: Int

    /// - Parameters:
    ///   - high: the level above which the filling side is pushed back; at least 1.
    ///   - low: the level at which it goes on; from 0 to `high`.
    public init(high: Int, low: Int) {
        self.high = high
        self.low = low
    }

    /// 1 MiB high, 256 KiB low: the default for received data waiting for its consumer and for bytes waiting for the
    /// socket.
    public static let standard = Watermarks(high: 1 << 20, low: 256 << 10)

    /// Whether the levels can be used: `1 <= high` and `0 <= low <= high`.
    public var isValid: Bool { self.high >= 1 && self.low >= 0 && self.low <= self.high }
}
