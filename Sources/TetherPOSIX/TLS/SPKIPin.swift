/// An SPKI pin as users write it: `sha256/` followed by the base64 of the SHA-256 digest of a certificate's DER
/// SubjectPublicKeyInfo (what `curl --pinnedpubkey` takes). The one rule every pin is held to, wherever it is
/// given (`TLSOptions.pins`, `tether connect --pin`) and on every platform: the base64 of exactly 32 bytes, 43
/// characters of the standard alphabet and one `=`, written canonically (the unused low bits of the last character
/// are zero), so that a pin that passes is the text a certificate's digest encodes to, and can match one.
package enum SPKIPin {
    /// The prefix that names the digest.
    package static let prefix = "sha256/"

    /// The digest of a well-formed `pin`: its base64 text (without the prefix) and its 32 bytes; nil otherwise.
    package static func digest(of pin: String) -> (base64: String, bytes: [UInt8])? {
        guard pin.hasPrefix(Self.prefix) else { return nil }
        let text = Array(pin.utf8.dropFirst(Self.prefix.utf8.count))
        guard text.count == 44, text[43] == UInt8(ascii: "=") else { return nil }
        var values: [UInt8] = []
        values.reserveCapacity(43)
        for character in text[..<43] {
            guard let value = Self.value(of: character) else { return nil }
            values.append(value)
        }
        // 43 characters carry 258 bits: 32 bytes and two bits that must be zero.
        guard values[42] & 0b11 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(32)
        var accumulator: UInt32 = 0
        var bits = 0
        for value in values {
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                bytes.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
                accumulator &= (1 << UInt32(bits)) - 1
            }
        }
        return (String(decoding: text, as: UTF8.self), bytes)
    }

    /// Whether `pin` is well formed (see `digest(of:)`).
    package static func isWellFormed(_ pin: String) -> Bool {
        Self.digest(of: pin) != nil
    }

    private static func value(of character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): character - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): character - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+"): 62
        case UInt8(ascii: "/"): 63
        default: nil
        }
    }
}
