import Testing
@testable import TetherPOSIX

@Suite struct SocketAddressTests {
    @Test func parsesIPv4Literal() throws {
        let address = try #require(SocketAddress(ip: "127.0.0.1", port: 8080))
        #expect(address.family == .ipv4)
        #expect(address.addressBytes == [127, 0, 0, 1])
        #expect(address.host == "127.0.0.1")
        #expect(address.description == "127.0.0.1:8080")
    }

    @Test func parsesIPv6LiteralWithAndWithoutBrackets() throws {
        let plain = try #require(SocketAddress(ip: "::1", port: 443))
        let bracketed = try #require(SocketAddress(ip: "[::1]", port: 443))
        #expect(plain == bracketed)
        #expect(plain.family == .ipv6)
        #expect(plain.addressBytes == Array(repeating: 0, count: 15) + [1])
        #expect(plain.description == "[::1]:443")
    }

    @Test func parsesNumericIPv6Zone() throws {
        let address = try #require(SocketAddress(ip: "fe80::1%1", port: 80))
        #expect(address.scopeID == 1)
        #expect(address.host == "fe80::1%1")
    }

    @Test func rejectsHostNamesAndBadPorts() {
        #expect(SocketAddress(ip: "localhost", port: 80) == nil)
        #expect(SocketAddress(ip: "127.0.0.1", port: 65536) == nil)
        #expect(SocketAddress(ip: "127.0.0.1", port: -1) == nil)
        #expect(SocketAddress(ip: "256.0.0.1", port: 80) == nil)
        #expect(SocketAddress(ip: "", port: 80) == nil)
    }

    @Test func withPortKeepsTheHost() throws {
        let address = try #require(SocketAddress(ip: "::1", port: 0)).withPort(9)
        #expect(address.description == "[::1]:9")
    }
}
