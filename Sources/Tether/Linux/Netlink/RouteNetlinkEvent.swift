#if os(Linux)
/// A link (`struct ifinfomsg` and the attributes the model uses).
struct LinkRecord: Equatable, Sendable {
    var index: Int32
    /// `ARPHRD_*`.
    var type: UInt16
    /// `IFF_*`.
    var flags: UInt32
    var name: String
    /// `IFLA_INFO_KIND` ("veth", "wwan", "wireguard", ...), when the link has one.
    var kind: String?

    var isAdministrativelyUp: Bool { self.flags & Netlink.LinkFlag.up != 0 }
    var isLoopback: Bool { self.flags & Netlink.LinkFlag.loopback != 0 || self.type == Netlink.LinkType.loopback }

    /// Up, running (carrier, not dormant) and not loopback: a link that can carry a default route.
    var canCarryTraffic: Bool {
        self.isAdministrativelyUp && self.flags & Netlink.LinkFlag.running != 0 && !self.isLoopback
    }

    /// Linux has no interface-kind API in rtnetlink; the kind follows the link type and the kernel's and
    /// systemd's naming (`wl*` Wi-Fi; `ww*`, `rmnet*`, `ccmni*`, kind "wwan" or raw-IP links cellular).
    var interfaceKind: InterfaceKind {
        if self.isLoopback { return .loopback }
        if self.type == Netlink.LinkType.rawIP || self.kind == "wwan" { return .cellular }
        for prefix in ["ww", "rmnet", "ccmni"] where self.name.hasPrefix(prefix) { return .cellular }
        guard self.type == Netlink.LinkType.ether else { return .other }
        return self.name.hasPrefix("wl") ? .wifi : .wiredEthernet
    }
}

/// An interface address (`struct ifaddrmsg` and the attributes the model uses).
struct AddressRecord: Equatable, Sendable {
    var linkIndex: Int32
    var family: UInt8
    var prefixLength: UInt8
    var scope: UInt8
    /// `IFA_F_*`, from `IFA_FLAGS` when present (it carries the bits that do not fit the header's byte).
    var flags: UInt32
    /// `IFA_LOCAL`, or `IFA_ADDRESS` when there is no local address (IPv6).
    var address: [UInt8]

    struct Key: Hashable {
        var linkIndex: Int32
        var family: UInt8
        var prefixLength: UInt8
        var address: [UInt8]
    }

    var key: Key {
        Key(linkIndex: self.linkIndex, family: self.family, prefixLength: self.prefixLength, address: self.address)
    }

    /// Global or site scope, and not waiting for or failed in duplicate address detection: an address that
    /// traffic through a default route can leave from.
    var isUsableSource: Bool {
        self.scope < Netlink.Scope.link
            && self.flags & (Netlink.AddressFlag.tentative | Netlink.AddressFlag.dadFailed) == 0
    }
}

/// A route (`struct rtmsg` and the attributes the model uses).
struct RouteRecord: Equatable, Sendable {
    var family: UInt8
    var destinationLength: UInt8
    var typeOfService: UInt8
    /// `RTA_TABLE` when present, else the header's 8-bit table.
    var table: UInt32
    /// `RTN_*`.
    var type: UInt8
    /// `RTA_PRIORITY`, 0 when absent.
    var metric: UInt32
    var gateway: [UInt8]
    var preferredSource: [UInt8]
    /// The output links: `RTA_OIF`, or each hop of `RTA_MULTIPATH`.
    var outputLinks: [Int32]

    /// A unicast default route of the main table for IPv4 or IPv6.
    var isDefault: Bool {
        self.destinationLength == 0 && self.table == Netlink.mainTable && self.type == Netlink.unicastRoute
            && (self.family == Netlink.Family.inet || self.family == Netlink.Family.inet6)
    }

    /// Routes with the same slot: a replace swaps every route in it.
    func sharesSlot(with other: RouteRecord) -> Bool {
        self.family == other.family && self.table == other.table && self.typeOfService == other.typeOfService
            && self.metric == other.metric && self.destinationLength == other.destinationLength
    }
}

/// What one rtnetlink message means for the path model.
enum RouteNetlinkEvent: Equatable, Sendable {
    case linkChanged(LinkRecord)
    case linkRemoved(index: Int32)
    case addressAdded(AddressRecord)
    case addressRemoved(AddressRecord)
    case routeAdded(RouteRecord, replacing: Bool)
    case routeRemoved(RouteRecord)
    /// The end of a dump; `error` is the kernel's (negative errno) status, 0 when the dump is complete.
    case done(error: Int32)
    /// An error or acknowledgement for a request; `error` is 0 for an acknowledgement.
    case error(Int32)
    /// The kernel dropped messages for this socket.
    case overrun
    /// A message the model does not use.
    case ignored

    private static let linkHeaderSize = 16
    private static let addressHeaderSize = 8
    private static let routeHeaderSize = 12
    private static let multipathHopHeaderSize = 8

    init(decoding message: NetlinkMessage) throws(NetlinkParseError) {
        let payload = message.payload
        switch message.type {
        case Netlink.MessageType.newLink, Netlink.MessageType.deleteLink:
            try Self.require(Self.linkHeaderSize, in: message)
            let index = payload.loadNative(Int32.self, at: 4)
            if message.type == Netlink.MessageType.deleteLink {
                self = .linkRemoved(index: index)
                return
            }
            let attributes = try NetlinkAttributes(parsing: payload.dropFirst(Self.linkHeaderSize))
            var kind: String?
            if let linkInfo = attributes[Netlink.LinkAttribute.linkInfo] {
                kind = try NetlinkAttributes(parsing: linkInfo).string(Netlink.LinkAttribute.infoKind)
            }
            self = .linkChanged(
                LinkRecord(
                    index: index,
                    type: payload.loadNative(UInt16.self, at: 2),
                    flags: payload.loadNative(UInt32.self, at: 8),
                    name: attributes.string(Netlink.LinkAttribute.name) ?? "",
                    kind: kind
                )
            )
        case Netlink.MessageType.newAddress, Netlink.MessageType.deleteAddress:
            try Self.require(Self.addressHeaderSize, in: message)
            let attributes = try NetlinkAttributes(parsing: payload.dropFirst(Self.addressHeaderSize))
            let address = attributes[Netlink.AddressAttribute.local] ?? attributes[Netlink.AddressAttribute.address]
            let record = AddressRecord(
                linkIndex: payload.loadNative(Int32.self, at: 4),
                family: payload.loadNative(UInt8.self, at: 0),
                prefixLength: payload.loadNative(UInt8.self, at: 1),
                scope: payload.loadNative(UInt8.self, at: 3),
                flags: try attributes.uint32(Netlink.AddressAttribute.flags)
                    ?? UInt32(payload.loadNative(UInt8.self, at: 2)),
                address: Array(address ?? [])
            )
            self = message.type == Netlink.MessageType.newAddress ? .addressAdded(record) : .addressRemoved(record)
        case Netlink.MessageType.newRoute, Netlink.MessageType.deleteRoute:
            try Self.require(Self.routeHeaderSize, in: message)
            let attributes = try NetlinkAttributes(parsing: payload.dropFirst(Self.routeHeaderSize))
            var outputLinks: [Int32] = []
            if let outputLink = try attributes.uint32(Netlink.RouteAttribute.outputInterface) {
                outputLinks.append(Int32(bitPattern: outputLink))
            }
            if let multipath = attributes[Netlink.RouteAttribute.multipath] {
                outputLinks += try Self.multipathLinks(multipath)
            }
            let record = RouteRecord(
                family: payload.loadNative(UInt8.self, at: 0),
                destinationLength: payload.loadNative(UInt8.self, at: 1),
                typeOfService: payload.loadNative(UInt8.self, at: 3),
                table: try attributes.uint32(Netlink.RouteAttribute.table)
                    ?? UInt32(payload.loadNative(UInt8.self, at: 4)),
                type: payload.loadNative(UInt8.self, at: 7),
                metric: try attributes.uint32(Netlink.RouteAttribute.priority) ?? 0,
                gateway: Array(attributes[Netlink.RouteAttribute.gateway] ?? []),
                preferredSource: Array(attributes[Netlink.RouteAttribute.preferredSource] ?? []),
                outputLinks: outputLinks
            )
            if message.type == Netlink.MessageType.newRoute {
                self = .routeAdded(record, replacing: message.flags & Netlink.HeaderFlag.replace != 0)
            } else {
                self = .routeRemoved(record)
            }
        case Netlink.MessageType.done:
            // Older kernels may send DONE without the status word.
            self = .done(error: payload.count >= 4 ? payload.loadNative(Int32.self, at: 0) : 0)
        case Netlink.MessageType.error:
            try Self.require(4, in: message)
            self = .error(payload.loadNative(Int32.self, at: 0))
        case Netlink.MessageType.overrun:
            self = .overrun
        default:
            self = .ignored
        }
    }

    private static func require(_ size: Int, in message: NetlinkMessage) throws(NetlinkParseError) {
        guard message.payload.count >= size else {
            throw .truncatedPayload(messageType: message.type, needed: size, available: message.payload.count)
        }
    }

    /// The output links of `RTA_MULTIPATH`: a walk over `struct rtnexthop` (length, flags, hops, ifindex).
    private static func multipathLinks(_ region: ArraySlice<UInt8>) throws(NetlinkParseError) -> [Int32] {
        var links: [Int32] = []
        var offset = 0
        while offset < region.count {
            let available = region.count - offset
            guard available >= Self.multipathHopHeaderSize else {
                throw .invalidAttributeValue(attributeType: Netlink.RouteAttribute.multipath, length: region.count)
            }
            let length = Int(region.loadNative(UInt16.self, at: offset))
            guard length >= Self.multipathHopHeaderSize, length <= available else {
                throw .invalidAttributeLength(declared: length, available: available)
            }
            links.append(region.loadNative(Int32.self, at: offset + 4))
            offset += min(Netlink.aligned(length), available)
        }
        return links
    }
}
#endif
