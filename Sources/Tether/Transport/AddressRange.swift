/// A CIDR range of IP addresses, as `no_proxy` lists them: `10.0.0.0/8`, `192.168.1.0/24`, `fd00::/8`, `::1/128`.
///
/// It contains numeric hosts only: a domain name is never in a range, whatever it resolves to. An IPv4 range also
/// contains the IPv4-mapped IPv6 form of its addresses (`::ffff:10.1.2.3` is in `10.0.0.0/8`), which reaches the
/// same IPv4 host; an IPv4 host is never in an IPv6 range, so that `::/0` means every IPv6 address and no more.
struct AddressRange: Equatable {
    /// The network's address in network byte order, 4 bytes (IPv4) or 16 (IPv6), with the bits past the prefix
    /// cleared.
    let network: [UInt8]
    /// How many leading bits an address must share with `network`: 0...32 for IPv4, 0...128 for IPv6.
    let prefixLength: Int

    /// Parses `ADDRESS/LENGTH`, the IPv6 address optionally in brackets (`[fd00::]/8`). Nil for anything else: no
    /// `/`, an address that is not numeric (or has a zone), a length that is not decimal digits within the family's
    /// bits. Bits of the address past the prefix are ignored: `10.1.2.3/8` is `10.0.0.0/8`.
    init?(_ text: some StringProtocol) {
        guard let slash = text.firstIndex(of: "/") else { return nil }
        let address = text[..<slash]
        let length = text[text.index(after: slash)...]
        // Digits only: `Int` alone would take `+8`.
        guard (1...3).contains(length.utf8.count), length.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
            let prefixLength = Int(length), !address.contains("%"), let bytes = Self.addressBytes(of: address),
            prefixLength <= bytes.count * 8
        else { return nil }
        self.network = Self.masked(bytes, prefixLength: prefixLength)
        self.prefixLength = prefixLength
    }

    /// Whether `host` is a numeric address (brackets and an IPv6 zone allowed: `[fe80::1%eth0]`) in this range.
    func contains(host: some StringProtocol) -> Bool {
        var host = Substring(host)
        if let percent = host.firstIndex(of: "%") {
            host = host[..<percent]  // the zone says which link, not which address
            if host.hasPrefix("[") { host += "]" }
        }
        guard let bytes = Self.addressBytes(of: host) else { return false }  // a domain name
        var forms = [bytes]
        if bytes.count == 16, bytes.prefix(12).elementsEqual(Self.ipv4MappedPrefix) {
            forms.append(Array(bytes.suffix(4)))
        }
        return forms.contains { form in
            form.count == self.network.count && Self.masked(form, prefixLength: self.prefixLength) == self.network
        }
    }

    /// `::ffff:0:0/96`, the IPv6 prefix of IPv4-mapped addresses.
    private static let ipv4MappedPrefix: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF]

    /// The bytes of a numeric IPv4 or IPv6 address (by `inet_pton`'s rules), or nil.
    private static func addressBytes(of text: some StringProtocol) -> [UInt8]? {
        IPAddressText.bytes(of: text)
    }

    private static func masked(_ bytes: [UInt8], prefixLength: Int) -> [UInt8] {
        bytes.indices.map { index in
            let kept = min(max(prefixLength - index * 8, 0), 8)
            // A shift by 8 or more gives 0 (Swift's smart shift): nothing of that byte is kept.
            return bytes[index] & (UInt8.max << (8 - kept))
        }
    }
}
