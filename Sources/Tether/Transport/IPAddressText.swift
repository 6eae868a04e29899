/// The bytes of a numeric IP address written as text, by the rules of `inet_pton`: dotted-decimal IPv4 (four
/// decimal numbers 0...255, without leading zeros) and the RFC 4291 forms of IPv6 (eight groups of one to four hex
/// digits, one `::` for a run of zero groups, a dotted IPv4 tail for the last 32 bits). In plain Swift so that it
/// means the same on every platform; tested against the C library's `inet_pton` on Linux.
enum IPAddressText {
    /// The 4 (IPv4) or 16 (IPv6) bytes of `text` in network order, or nil when it is not a numeric address. One
    /// pair of brackets around the address is allowed (`[::1]`, as in a URL); a zone (`fe80::1%eth0`) is not.
    static func bytes(of text: some StringProtocol) -> [UInt8]? {
        var scalars = Array(text.utf8)
        if scalars.count >= 2, scalars.first == UInt8(ascii: "["), scalars.last == UInt8(ascii: "]") {
            scalars = Array(scalars.dropFirst().dropLast())
        }
        return self.ipv4(scalars[...]) ?? self.ipv6(scalars)
    }

    /// Dotted-decimal IPv4: exactly four parts of one to three digits, each at most 255, no leading zero.
    private static func ipv4(_ text: ArraySlice<UInt8>) -> [UInt8]? {
        let parts = text.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var bytes: [UInt8] = []
        for part in parts {
            guard (1...3).contains(part.count), part.allSatisfy(Self.isDigit),
                part.count == 1 || part.first != UInt8(ascii: "0")
            else { return nil }
            let value = part.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
            guard value <= 255 else { return nil }
            bytes.append(UInt8(value))
        }
        return bytes
    }

    /// IPv6: up to eight groups of hex, one `::`, and a dotted IPv4 tail in place of the last two groups.
    private static func ipv6(_ text: [UInt8]) -> [UInt8]? {
        let colon = UInt8(ascii: ":")
        guard text.count >= 2 else { return nil }
        // `::` is the only place where a colon may begin or end the text.
        if text.first == colon, text[1] != colon { return nil }
        if text.last == colon, text[text.count - 2] != colon { return nil }
        var head: [UInt8] = []  // the bytes before `::` (or all of them)
        var tail: [UInt8] = []  // the bytes after `::`
        var compressed = false
        var index = 0
        while index < text.count {
            if text[index] == colon, index + 1 < text.count, text[index + 1] == colon {
                guard !compressed else { return nil }  // a second `::`
                compressed = true
                index += 2
                guard index == text.count || text[index] != colon else { return nil }  // `:::`
                continue
            }
            if text[index] == colon {
                // A single colon separates two groups: one must have come before it.
                guard index > 0, text[index - 1] != colon else { return nil }
                index += 1
                guard index < text.count else { return nil }
                continue
            }
            let end = text[index...].firstIndex(of: colon) ?? text.count
            let group = text[index..<end]
            if end == text.count, group.contains(UInt8(ascii: ".")) {
                guard let ipv4 = self.ipv4(group) else { return nil }
                if compressed { tail += ipv4 } else { head += ipv4 }
                index = end
                continue
            }
            guard (1...4).contains(group.count), group.allSatisfy(Self.isHexDigit) else { return nil }
            let value = group.reduce(0) { $0 << 4 | Int(Self.hexValue($1)) }
            let bytes = [UInt8(value >> 8), UInt8(value & 0xFF)]
            if compressed { tail += bytes } else { head += bytes }
            index = end
        }
        if compressed {
            // `::` stands for at least one zero group.
            guard head.count + tail.count <= 14 else { return nil }
            return head + [UInt8](repeating: 0, count: 16 - head.count - tail.count) + tail
        }
        return head.count == 16 ? head : nil
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        self.isDigit(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte | 0x20)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8 {
        self.isDigit(byte) ? byte - UInt8(ascii: "0") : (byte | 0x20) - UInt8(ascii: "a") + 10
    }
}
