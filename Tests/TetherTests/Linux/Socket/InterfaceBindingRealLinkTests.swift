#if os(Linux)
import Foundation
import Testing
import TetherPOSIX
@testable import Tether

/// A connection that must leave by a named interface (`TCPConnection.connect(interface:)`, which
/// `TransportRequest.interface` reaches): two links from the watched namespace to a server behind both, the default
/// route preferring the first. Bound to the second link's interface, the connection leaves by it; unbound, it follows
/// the preferred route; an interface the namespace does not have fails the connect.
@Suite(.serialized) struct InterfaceBindingRealLinkTests {
    static let needsRoot = ConditionTrait.enabled(
        if: NetworkNamespaceFixture.isAvailable, NetworkNamespaceFixture.unavailableReason)

    @Test(needsRoot)
    func aConnectionBoundToTheSecondLinkLeavesByItWhileTheDefaultRoutePrefersTheFirst() async throws {
        let fixture = try NetworkNamespaceFixture()
        defer { fixture.remove() }
        try fixture.connect()
        try fixture.connectSecondLink()
        try fixture.addServerBehindBothLinks()
        // Both links have a default route (as a phone has Wi-Fi and cellular); the first one's lower metric wins.
        try fixture.inWatched("route", "add", "default", "via", "198.51.100.2", "dev", "vc", "metric", "200")
        let listener = try TCPListener.bind(
            host: NetworkNamespaceFixture.serverBehindBothLinks, namespace: NetworkNamespace(path: fixture.peerPath))
        listener.start(onAccept: { $0.close() })
        defer { listener.close() }
        let server = try #require(SocketAddress(ip: NetworkNamespaceFixture.serverBehindBothLinks, port: listener.port))
        let watched = NetworkNamespace(path: fixture.watchedPath)

        let preferred = try await TCPConnection.connect(to: [server], timeout: .seconds(5), namespace: watched)
        #expect(preferred.localAddress?.host == "192.0.2.1")  // by the default route: the first link
        preferred.close()
        let bound = try await TCPConnection.connect(
            to: [server], timeout: .seconds(5), namespace: watched, interface: "vc")
        #expect(bound.localAddress?.host == "198.51.100.1")  // by the second link, as asked
        bound.close()
        await #expect(throws: SocketError.system(operation: "setsockopt(SO_BINDTODEVICE)", errno: ENODEV)) {
            _ = try await TCPConnection.connect(
                to: [server], timeout: .seconds(5), namespace: watched, interface: "nosuch0")
        }
    }
}
#endif
