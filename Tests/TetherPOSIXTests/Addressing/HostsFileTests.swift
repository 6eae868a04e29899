import Testing
@testable import TetherPOSIX

@Suite struct HostsFileTests {
    @Test func aNamesAddressesComeInTheFilesOrderOnceEach() {
        let text = """
            # the namespace's hosts
            2001:db8::2   dual.test dual
            192.0.2.2\tother.test DUAL.TEST   # a comment
            192.0.2.2 dual.test
            not-an-address dual.test
            192.0.2.9
            """
        let found = HostsFile.addresses(for: "Dual.Test", port: 8080, in: text)
        #expect(found == [SocketAddress(ip: "2001:db8::2", port: 8080)!, SocketAddress(ip: "192.0.2.2", port: 8080)!])
        #expect(HostsFile.addresses(for: "absent.test", port: 80, in: text).isEmpty)
    }

    @Test func theHostsFileIsTheOneIpNetnsExecShowsForANamedNamespace() {
        #expect(HostsFile.path(forNamespace: "/var/run/netns/blue") == "/etc/netns/blue/hosts")
        #expect(HostsFile.path(forNamespace: "/run/netns/blue") == "/etc/netns/blue/hosts")
        #expect(HostsFile.path(forNamespace: "/proc/1234/ns/net") == nil)
        #expect(HostsFile.path(forNamespace: "/var/run/netns/") == nil)
    }
}
