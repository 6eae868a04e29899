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
        let text = String(pin.dropFirst(Self.prefix.count))
        // `Base64.decode` takes canonical text only: 44 characters that decode to 32 bytes are 43 and one `=`.
        guard text.utf8.count == 44, let bytes = Base64.decode(text), bytes.count == 32 else { return nil }
        return (text, bytes)
    }

    /// Whether `pin` is well formed (see `digest(of:)`).
    package static func isWellFormed(_ pin: String) -> Bool {
        Self.digest(of: pin) != nil
    }
}
