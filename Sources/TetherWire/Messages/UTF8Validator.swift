/// An incremental UTF-8 validator (RFC 3629): feed the bytes of a text message in any split and it fails on
/// the first byte that cannot start or continue a valid sequence, so an invalid fragment is rejected when it
/// arrives, while a code point split across fragments still passes.
///
/// Rejects overlong forms, surrogates (U+D800–U+DFFF) and code points above U+10FFFF.
struct UTF8Validator: Hashable, Sendable {
    /// Continuation bytes still needed by the sequence in progress.
    private var needed: UInt8 = 0
    /// The range the next continuation byte must fall in (narrower than 80–BF right after some lead bytes).
    private var lower: UInt8 = 0x80
    private var upper: UInt8 = 0xBF

    init() {}

    /// True when no multi-byte sequence is open, i.e. the bytes so far end on a code point boundary.
    var isAtBoundary: Bool { self.needed == 0 }

    /// Validates the next bytes. Returns false at the first invalid byte (the validator is then in an
    /// undefined state; start a new one).
    mutating func validate(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        let count = bytes.count
        var index = 0
        var needed = self.needed
        var lower = self.lower
        var upper = self.upper
        while index < count {
            if needed == 0 {
                // ASCII fast path, 8 bytes at a time.
                while index &+ 8 <= count,
                    base.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 == 0
                {
                    index &+= 8
                }
                guard index < count else { break }
                let byte = base.load(fromByteOffset: index, as: UInt8.self)
                index &+= 1
                switch byte {
                case 0x00...0x7F: continue
                case 0xC2...0xDF: (needed, lower, upper) = (1, 0x80, 0xBF)
                case 0xE0: (needed, lower, upper) = (2, 0xA0, 0xBF)
                case 0xE1...0xEC, 0xEE...0xEF: (needed, lower, upper) = (2, 0x80, 0xBF)
                case 0xED: (needed, lower, upper) = (2, 0x80, 0x9F)
                case 0xF0: (needed, lower, upper) = (3, 0x90, 0xBF)
                case 0xF1...0xF3: (needed, lower, upper) = (3, 0x80, 0xBF)
                case 0xF4: (needed, lower, upper) = (3, 0x80, 0x8F)
                default: return false
                }
            } else {
                let byte = base.load(fromByteOffset: index, as: UInt8.self)
                index &+= 1
                guard byte >= lower, byte <= upper else { return false }
                needed &-= 1
                lower = 0x80
                upper = 0xBF
            }
        }
        self.needed = needed
        self.lower = lower
        self.upper = upper
        return true
    }

    /// Validates a complete text: every sequence valid and none left open at the end.
    static func isValid(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var validator = UTF8Validator()
        return validator.validate(bytes) && validator.isAtBoundary
    }

    /// Validates a complete text held in any byte collection.
    static func isValid(_ bytes: some Collection<UInt8>) -> Bool {
        if let result = bytes.withContiguousStorageIfAvailable({ isValid(UnsafeRawBufferPointer($0)) }) {
            return result
        }
        return Array(bytes).withUnsafeBytes { isValid($0) }
    }
}
