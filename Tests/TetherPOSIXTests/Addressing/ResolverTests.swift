#if os(Linux)
import Glibc
import Testing
@testable import TetherPOSIX

@Suite(.timeLimit(.minutes(1)))
struct ResolverTests {
    @Test func literalsResolveToThemselvesWithoutALookup() async throws {
        #expect(try await Resolver.resolve(host: "127.0.0.1", port: 80) == [SocketAddress(ip: "127.0.0.1", port: 80)!])
        #expect(try await Resolver.resolve(host: "::1", port: 80) == [SocketAddress(ip: "::1", port: 80)!])
        #expect(try await Resolver.resolve(host: "[::1]", port: 80) == [SocketAddress(ip: "::1", port: 80)!])
    }

    @Test func localhostResolvesToLoopbackAddresses() async throws {
        let addresses = try await Resolver.resolve(host: "localhost", port: 8080)
        #expect(!addresses.isEmpty)
        for address in addresses {
            #expect(address.port == 8080)
            #expect(address.host == "127.0.0.1" || address.host == "::1")
        }
        #expect(Set(addresses).count == addresses.count)
    }

    @Test func emptyHostAndBadPortFailWithNameResolutionErrors() async {
        await #expect(throws: SocketError.nameResolution(code: EAI_NONAME)) {
            try await Resolver.resolve(host: "", port: 80)
        }
        await #expect(throws: SocketError.nameResolution(code: EAI_SERVICE)) {
            try await Resolver.resolve(host: "localhost", port: 70000)
        }
    }

    @Test func nameResolutionErrorDescribesTheCause() {
        let description = SocketError.nameResolution(code: EAI_NONAME).description
        #expect(description.hasPrefix("name resolution failed: "))
        #expect(description.count > "name resolution failed: ".count)
    }
}
#endif
