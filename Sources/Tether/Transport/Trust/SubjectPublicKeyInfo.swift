/// Rebuilds a public key's DER SubjectPublicKeyInfo (RFC 5280 §4.1.2.7) from the raw bytes Apple's Security
/// framework hands out (`SecKeyCopyExternalRepresentation`): what an SPKI pin is the SHA-256 of.
///
/// Security gives an RSA key as its PKCS#1 `RSAPublicKey` and an elliptic-curve key as its uncompressed point
/// (`04 || X || Y`); the SPKI wraps either in a BIT STRING after the algorithm's identifier (RFC 3279 §2.3.1,
/// RFC 5480 §2.1.1). Plain Swift, so that it is tested on Linux against OpenSSL's encoding of the same keys.
enum SubjectPublicKeyInfo {
    /// The kinds of key a server certificate carries that this can encode.
    enum KeyKind: Equatable, Sendable {
        /// RSA, any size: the raw bytes are the PKCS#1 `RSAPublicKey` SEQUENCE.
        case rsa
        /// An elliptic curve key on P-256, P-384 or P-521 (told apart by the point's length): the raw bytes are
        /// the uncompressed point.
        case ellipticCurve
    }

    /// The DER SubjectPublicKeyInfo of the key with these raw bytes, or nil when they are not what `kind` is
    /// encoded as (an RSA key that is not one DER SEQUENCE, a point that is not uncompressed or on another curve).
    static func der(kind: KeyKind, rawKey: [UInt8]) -> [UInt8]? {
        let algorithm: [UInt8]
        switch kind {
        case .rsa:
            guard Self.isOneSequence(rawKey) else { return nil }
            // SEQUENCE { rsaEncryption (1.2.840.113549.1.1.1), NULL }
            algorithm = Self.sequence([0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x01, 0x05, 0x00])
        case .ellipticCurve:
            guard rawKey.first == 0x04, let curve = Self.curveIdentifier(pointLength: rawKey.count) else { return nil }
            // SEQUENCE { id-ecPublicKey (1.2.840.10045.2.1), the named curve }
            algorithm = Self.sequence([0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01] + curve)
        }
        // The BIT STRING's first byte counts the unused bits of its last byte: none.
        return Self.sequence(algorithm + Self.element(tag: 0x03, [0x00] + rawKey))
    }

    /// The OID (tag, length and value) of the curve whose uncompressed points have `pointLength` bytes.
    private static func curveIdentifier(pointLength: Int) -> [UInt8]? {
        switch pointLength {
        case 65: [0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07]  // prime256v1, 1.2.840.10045.3.1.7
        case 97: [0x06, 0x05, 0x2B, 0x81, 0x04, 0x00, 0x22]  // secp384r1, 1.3.132.0.34
        case 133: [0x06, 0x05, 0x2B, 0x81, 0x04, 0x00, 0x23]  // secp521r1, 1.3.132.0.35
        default: nil
        }
    }

    private static func sequence(_ content: [UInt8]) -> [UInt8] {
        Self.element(tag: 0x30, content)
    }

    /// A DER element: the tag, the definite length (short form below 128, else long form), the content.
    static func element(tag: UInt8, _ content: [UInt8]) -> [UInt8] {
        var length = [UInt8]()
        if content.count < 0x80 {
            length = [UInt8(content.count)]
        } else {
            var remaining = content.count
            while remaining > 0 {
                length.insert(UInt8(truncatingIfNeeded: remaining), at: 0)
                remaining >>= 8
            }
            length.insert(0x80 | UInt8(length.count), at: 0)
        }
        return [tag] + length + content
    }

    /// Whether `bytes` are exactly one DER SEQUENCE (its length matches what follows, nothing after it).
    private static func isOneSequence(_ bytes: [UInt8]) -> Bool {
        guard bytes.count >= 2, bytes[0] == 0x30 else { return false }
        let first = Int(bytes[1])
        guard first & 0x80 != 0 else { return bytes.count == 2 + first }
        let count = first & 0x7F
        guard (1...4).contains(count), bytes.count >= 2 + count else { return false }
        let length = bytes[2..<(2 + count)].reduce(0) { $0 << 8 | Int($1) }
        return bytes.count == 2 + count + length
    }
}
