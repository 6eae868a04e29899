#if os(Linux)
import Testing
@testable import Tether

@Suite struct RouteNetlinkModelTests {
    typealias Bytes = RouteNetlinkBytes
    static let ethernetAddress: [UInt8] = [192, 0, 2, 1]
    static let gateway: [UInt8] = [192, 0, 2, 254]
    static let globalIPv6: [UInt8] = [0x20, 0x01, 0x0d, 0xb8] + [UInt8](repeating: 0, count: 11) + [1]
    static let linkLocalIPv6: [UInt8] = [0xfe, 0x80] + [UInt8](repeating: 0, count: 13) + [1]
    static let wired = PathSnapshot(status: .satisfied, interfaces: [.wiredEthernet], interfaceNames: ["eth0"])
    static let unsatisfied = PathSnapshot(status: .unsatisfied)

    /// eth0 (index 2), up and running, with 192.0.2.1/24 and a default route via 192.0.2.254.
    func connectedModel() throws -> RouteNetlinkModel {
        var model = RouteNetlinkModel()
        try model.feed(Bytes.link(index: 2, name: "eth0"))
        try model.feed(Bytes.address(index: 2, Self.ethernetAddress))
        try model.feed(Bytes.route(gateway: Self.gateway, outputLink: 2))
        return model
    }

    @Test func emptyModelIsUnsatisfied() {
        #expect(RouteNetlinkModel().snapshot == Self.unsatisfied)
    }

    @Test func upLinkWithAddressAndDefaultRouteIsSatisfied() throws {
        #expect(try self.connectedModel().snapshot == Self.wired)
    }

    @Test func linkDownIsUnsatisfiedAndFlushesItsIPv4DefaultRoute() throws {
        var model = try self.connectedModel()
        try model.feed(Bytes.link(index: 2, name: "eth0", flags: Bytes.down))
        #expect(model.snapshot == Self.unsatisfied)
        #expect(model.defaultRoutes.isEmpty)
        // The kernel removed the IPv4 route silently; up again is not enough.
        try model.feed(Bytes.link(index: 2, name: "eth0"))
        #expect(model.snapshot == Self.unsatisfied)
        try model.feed(Bytes.route(gateway: Self.gateway, outputLink: 2))
        #expect(model.snapshot == Self.wired)
    }

    @Test func carrierLossIsUnsatisfiedAndKeepsTheRouteForWhenCarrierReturns() throws {
        var model = try self.connectedModel()
        try model.feed(Bytes.link(index: 2, name: "eth0", flags: Bytes.upWithoutCarrier))
        #expect(model.snapshot == Self.unsatisfied)
        try model.feed(Bytes.link(index: 2, name: "eth0"))
        #expect(model.snapshot == Self.wired)
    }

    @Test func defaultRouteAddedThenRemoved() throws {
        var model = RouteNetlinkModel()
        try model.feed(Bytes.link(index: 2, name: "eth0") + Bytes.address(index: 2, Self.ethernetAddress))
        #expect(model.snapshot == Self.unsatisfied)
        try model.feed(Bytes.route(gateway: Self.gateway, outputLink: 2))
        #expect(model.snapshot == Self.wired)
        try model.feed(Bytes.route(Netlink.MessageType.deleteRoute, gateway: Self.gateway, outputLink: 2))
        #expect(model.snapshot == Self.unsatisfied)
    }

    @Test func deleteNamingOnlyTheSlotRemovesTheSingleMatchingRoute() throws {
        var model = try self.connectedModel()
        try model.feed(Bytes.route(Netlink.MessageType.deleteRoute))
        #expect(model.snapshot == Self.unsatisfied)
    }

    @Test func lastIPv4AddressRemovedMakesThePathUnsatisfiedAndFlushesTheRoute() throws {
        var model = try self.connectedModel()
        try model.feed(Bytes.address(Netlink.MessageType.deleteAddress, index: 2, Self.ethernetAddress))
        #expect(model.snapshot == Self.unsatisfied)
        try model.feed(Bytes.address(index: 2, Self.ethernetAddress))
        #expect(model.snapshot == Self.unsatisfied)
    }

    @Test func routeGoesWithItsPreferredSourceAddress() throws {
        var model = try self.connectedModel()
        let secondary: [UInt8] = [192, 0, 2, 10]
        try model.feed(Bytes.address(index: 2, secondary))
        try model.feed(Bytes.route(Netlink.MessageType.deleteRoute, gateway: Self.gateway, outputLink: 2))
        try model.feed(Bytes.route(gateway: Self.gateway, preferredSource: secondary, outputLink: 2))
        #expect(model.snapshot == Self.wired)
        try model.feed(Bytes.address(Netlink.MessageType.deleteAddress, index: 2, secondary))
        #expect(model.snapshot == Self.unsatisfied)
    }

    @Test func routesOutsideTheMainTableWithAPrefixOrNotUnicastDoNotCount() throws {
        var model = RouteNetlinkModel()
        try model.feed(Bytes.link(index: 2, name: "eth0") + Bytes.address(index: 2, Self.ethernetAddress))
        try model.feed(Bytes.route(table: 100, gateway: Self.gateway, outputLink: 2))
        try model.feed(Bytes.route(destinationLength: 8, gateway: Self.gateway, outputLink: 2))
        try model.feed(Bytes.route(type: 6 /* RTN_BLACKHOLE */))
        #expect(model.snapshot == Self.unsatisfied)
        #expect(model.defaultRoutes.isEmpty)
    }

    @Test func loopbackOnlyIsUnsatisfied() throws {
        var model = RouteNetlinkModel()
        let loopbackFlags = Bytes.upAndRunning | Netlink.LinkFlag.loopback
        try model.feed(Bytes.link(index: 1, name: "lo", flags: loopbackFlags, linkType: Netlink.LinkType.loopback))
        try model.feed(Bytes.address(index: 1, [127, 0, 0, 1], prefixLength: 8, scope: 254 /* RT_SCOPE_HOST */))
        try model.feed(Bytes.route(outputLink: 1))
        #expect(model.snapshot == Self.unsatisfied)
    }

    @Test func ipv6DefaultRouteNeedsAGlobalAddressThatIsNotTentative() throws {
        var model = RouteNetlinkModel()
        try model.feed(Bytes.link(index: 2, name: "eth0"))
        try model.feed(Bytes.address(index: 2, Self.linkLocalIPv6, prefixLength: 64, scope: Netlink.Scope.link))
        try model.feed(Bytes.route(family: Netlink.Family.inet6, metric: 1024, outputLink: 2))
        #expect(model.snapshot == Self.unsatisfied)
        let tentative = Netlink.AddressFlag.tentative
        try model.feed(Bytes.address(index: 2, Self.globalIPv6, prefixLength: 64, flags: tentative))
        #expect(model.snapshot == Self.unsatisfied)
        try model.feed(Bytes.address(index: 2, Self.globalIPv6, prefixLength: 64, flags: 0))
        #expect(model.snapshot == Self.wired)
    }

    @Test func ipv4AddressDoesNotSatisfyAnIPv6DefaultRoute() throws {
        var model = RouteNetlinkModel()
        try model.feed(Bytes.link(index: 2, name: "eth0") + Bytes.address(index: 2, Self.ethernetAddress))
        try model.feed(Bytes.route(family: Netlink.Family.inet6, metric: 1024, outputLink: 2))
        #expect(model.snapshot == Self.unsatisfied)
    }

    @Test func interfacesAreListedByMetricAndCellularFirstIsExpensive() throws {
        var model = RouteNetlinkModel()
        try model.feed(Bytes.link(index: 3, name: "wlan0") + Bytes.address(index: 3, [198, 51, 100, 7]))
        try model.feed(Bytes.link(index: 4, name: "wwan0", linkType: Netlink.LinkType.rawIP))
        try model.feed(Bytes.address(index: 4, [203, 0, 113, 9]))
        try model.feed(Bytes.route(metric: 600, outputLink: 3) + Bytes.route(metric: 700, outputLink: 4))
        #expect(
            model.snapshot
                == PathSnapshot(status: .satisfied, interfaces: [.wifi, .cellular], interfaceNames: ["wlan0", "wwan0"])
        )
        try model.feed(Bytes.link(index: 3, name: "wlan0", flags: Bytes.upWithoutCarrier))
        let cellular = PathSnapshot(
            status: .satisfied, isExpensive: true, interfaces: [.cellular], interfaceNames: ["wwan0"]
        )
        #expect(model.snapshot == cellular)
    }

    @Test func linkKindsFollowTypeKindAndName() {
        func kind(_ name: String, _ type: UInt16 = Netlink.LinkType.ether, kind: String? = nil) -> InterfaceKind {
            LinkRecord(index: 9, type: type, flags: Bytes.upAndRunning, name: name, kind: kind).interfaceKind
        }
        #expect(kind("wlp2s0") == .wifi)
        #expect(kind("enp3s0") == .wiredEthernet)
        #expect(kind("veth0", kind: "veth") == .wiredEthernet)
        #expect(kind("wwp0s20u4", Netlink.LinkType.none) == .cellular)
        #expect(kind("rmnet_data0", Netlink.LinkType.rawIP) == .cellular)
        #expect(kind("mbim0", Netlink.LinkType.none, kind: "wwan") == .cellular)
        #expect(kind("wg0", Netlink.LinkType.none, kind: "wireguard") == .other)
        #expect(kind("ppp0", Netlink.LinkType.ppp) == .other)
        #expect(kind("lo", Netlink.LinkType.loopback) == .loopback)
    }

    @Test func multipathRouteIsSatisfiedWhileAnyHopIsUsable() throws {
        var model = RouteNetlinkModel()
        try model.feed(Bytes.link(index: 2, name: "eth0") + Bytes.address(index: 2, Self.ethernetAddress))
        try model.feed(Bytes.link(index: 3, name: "eth1") + Bytes.address(index: 3, [198, 51, 100, 1]))
        try model.feed(Bytes.route(multipath: [2, 3]))
        #expect(
            model.snapshot
                == PathSnapshot(
                    status: .satisfied, interfaces: [.wiredEthernet, .wiredEthernet], interfaceNames: ["eth0", "eth1"]
                )
        )
        try model.feed(Bytes.link(index: 2, name: "eth0", flags: Bytes.down))
        let eth1 = PathSnapshot(status: .satisfied, interfaces: [.wiredEthernet], interfaceNames: ["eth1"])
        #expect(model.snapshot == eth1)
        try model.feed(Bytes.link(index: 3, name: "eth1", flags: Bytes.down))
        #expect(model.snapshot == Self.unsatisfied)
        #expect(model.defaultRoutes.isEmpty)
    }

    @Test func removedLinkTakesItsAddressesAndRoutes() throws {
        var model = try self.connectedModel()
        try model.feed(Bytes.link(Netlink.MessageType.deleteLink, index: 2, name: "eth0"))
        #expect(model.links.isEmpty && model.addresses.isEmpty && model.defaultRoutes.isEmpty)
        #expect(model.snapshot == Self.unsatisfied)
    }

    @Test func replaceSwapsTheRouteInItsSlot() throws {
        var model = try self.connectedModel()
        try model.feed(Bytes.link(index: 3, name: "eth1") + Bytes.address(index: 3, [198, 51, 100, 1]))
        try model.feed(Bytes.route(outputLink: 3, headerFlags: Netlink.HeaderFlag.replace))
        #expect(model.defaultRoutes.map(\.outputLinks) == [[3]])
        try model.feed(Bytes.link(index: 3, name: "eth1", flags: Bytes.upWithoutCarrier))
        #expect(model.snapshot == Self.unsatisfied)
    }

    @Test func movingTheDefaultRouteToAnotherLinkOfTheSameKindChangesTheSnapshot() throws {
        var model = try self.connectedModel()
        try model.feed(Bytes.link(index: 3, name: "eth1") + Bytes.address(index: 3, [198, 51, 100, 1]))
        #expect(model.snapshot == Self.wired)
        try model.feed(Bytes.route(outputLink: 3, headerFlags: Netlink.HeaderFlag.replace))
        let moved = model.snapshot
        #expect(moved.status == .satisfied && moved.interfaces == [.wiredEthernet])
        #expect(moved.interfaceNames == ["eth1"])
        #expect(moved != Self.wired)
        #expect(moved.changesInterfaces(from: Self.wired))
    }

    @Test func sameRouteAnnouncedTwiceIsKeptOnce() throws {
        var model = try self.connectedModel()
        try model.feed(Bytes.route(gateway: Self.gateway, outputLink: 2))
        #expect(model.defaultRoutes.count == 1)
        try model.feed(Bytes.route(Netlink.MessageType.deleteRoute, gateway: Self.gateway, outputLink: 2))
        #expect(model.snapshot == Self.unsatisfied)
    }
}
#endif
