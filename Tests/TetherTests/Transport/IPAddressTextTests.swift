#if canImport(Glibc)
import Glibc
#endif
import Testing
import TetherCore
@testable import Tether

/// `IPAddressText` reads addresses as the C library's `inet_pton` does (it replaced it so that `no_proxy` ranges
/// mean the same on Apple platforms): the forms written by hand, then a differential run against `inet_pton`.
@Suite struct IPAddressTextTests {
    @Test func readsTheUsualForms() {
        #expect(IPAddressText.bytes(of: "10.1.2.3") == [10, 1, 2, 3])
        #expect(IPAddressText.bytes(of: "::1") == [UInt8](repeating: 0, count: 15) + [1])
        #expect(IPAddressText.bytes(of: "[::1]") == [UInt8](repeating: 0, count: 15) + [1])
        #expect(IPAddressText.bytes(of: "::") == [UInt8](repeating: 0, count: 16))
        #expect(IPAddressText.bytes(of: "fd00::") == [0xFD] + [UInt8](repeating: 0, count: 15))
        #expect(
            IPAddressText.bytes(of: "::ffff:10.1.2.3") == [UInt8](repeating: 0, count: 10) + [0xFF, 0xFF, 10, 1, 2, 3])
        #expect(IPAddressText.bytes(of: "1:2:3:4:5:6:7:8") == [0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0, 8])
        #expect(IPAddressText.bytes(of: "ABCD:ef01::") == [0xAB, 0xCD, 0xEF, 0x01] + [UInt8](repeating: 0, count: 12))
    }

    @Test func refusesWhatIsNotANumericAddress() {
        for text in [
            "", "example.com", "10.1.2", "10.1.2.3.4", "10.1.2.256", "010.1.2.3", "10..2.3", "1:2:3:4:5:6:7",
            "1:2:3:4:5:6:7:8:9", "1::2::3", ":::", "1:::2", ":1", "1:", "12345::", "fe80::1%eth0", "[10.1.2.3",
            "1:2:3:4:5:6:7:8::", "::1.2.3", "1.2.3.4::", "+1.2.3.4",
        ] {
            #expect(IPAddressText.bytes(of: text) == nil, "\(text)")
        }
    }

    #if canImport(Glibc)
    /// Twenty thousand texts made from random addresses (some with a `::` run, some with an IPv4 tail), most of them
    /// then damaged by a character or two: each gets the answer `inet_pton` gives it (IPv4 first, then IPv6, the
    /// order `AddressRange` asks in).
    @Test func agreesWithInetPton() {
        var random = SplitMix64(seed: 0x7E7E_7E7E)
        var valid = 0
        for _ in 0..<20_000 {
            let text = Self.addressLikeText(&random)
            let expected = Self.inetPton(text)
            if expected != nil { valid += 1 }
            #expect(IPAddressText.bytes(of: text) == expected, "\(text)")
        }
        #expect(valid > 5_000, "the corpus holds valid addresses too")
    }

    private static func addressLikeText(_ random: inout SplitMix64) -> String {
        func below(_ bound: Int) -> Int { Int(random.next() % UInt64(bound)) }
        var groups = (0..<8).map { _ in
            below(3) == 0 ? "0" : String(below(65_536), radix: 16, uppercase: below(2) == 0)
        }
        if below(3) == 0 {
            groups = Array(groups.prefix(6)) + ["\(below(300)).\(below(256)).\(below(256)).\(below(256))"]
        }
        var text = groups.joined(separator: ":")
        if below(2) == 0 {
            let parts = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            let start = below(parts.count)
            let end = min(parts.count, start + below(4))
            text = parts[..<start].joined(separator: ":") + "::" + parts[end...].joined(separator: ":")
        }
        let alphabet = Array("0123456789abcdef:.")
        for _ in 0..<below(3) {
            var characters = Array(text)
            switch below(3) {
            case 0 where !characters.isEmpty: characters.remove(at: below(characters.count))
            case 1: characters.insert(alphabet[below(alphabet.count)], at: below(characters.count + 1))
            default: if !characters.isEmpty { characters[below(characters.count)] = alphabet[below(alphabet.count)] }
            }
            text = String(characters)
        }
        return text
    }

    private static func inetPton(_ text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return withUnsafeBytes(of: v4) { Array($0) } }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 { return withUnsafeBytes(of: v6) { Array($0) } }
        return nil
    }
    #endif
}
