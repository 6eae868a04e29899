#if os(Linux)
@testable import Tether

/// Hand-built rtnetlink messages, laid out as in <linux/rtnetlink.h> (host byte order).
enum RouteNetlinkBytes {
    static let upAndRunning: UInt32 = Netlink.LinkFlag.up | Netlink.LinkFlag.running | 0x1000 /* IFF_MULTICAST */
    static let upWithoutCarrier: UInt32 = Netlink.LinkFlag.up | 0x1000
    static let down: UInt32 = 0x1000

    static func attribute(_ type: UInt16, _ value: [UInt8]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.appendNative(UInt16(4 + value.count))
        bytes.appendNative(type)
        bytes += value
        bytes += repeatElement(0, count: Netlink.aligned(value.count) - value.count)
        return bytes
    }

    static func uint32(_ value: UInt32) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.appendNative(value)
        return bytes
    }

    static func string(_ value: String) -> [UInt8] { Array(value.utf8) + [0] }

    static func link(
        _ messageType: UInt16 = Netlink.MessageType.newLink,
        index: Int32,
        name: String,
        flags: UInt32 = upAndRunning,
        linkType: UInt16 = Netlink.LinkType.ether,
        kind: String? = nil,
        sequence: UInt32 = 0,
        headerFlags: UInt16 = 0
    ) -> [UInt8] {
        var payload: [UInt8] = [Netlink.Family.unspecified, 0]
        payload.appendNative(linkType)
        payload.appendNative(index)
        payload.appendNative(flags)
        payload.appendNative(UInt32(0xFFFF_FFFF))
        payload += Self.attribute(Netlink.LinkAttribute.name, Self.string(name))
        if let kind {
            let info = Self.attribute(Netlink.LinkAttribute.infoKind, Self.string(kind))
            payload += Self.attribute(Netlink.LinkAttribute.linkInfo, info)
        }
        return NetlinkMessage.encode(type: messageType, flags: headerFlags, sequence: sequence, payload: payload)
    }

    static func address(
        _ messageType: UInt16 = Netlink.MessageType.newAddress,
        index: Int32,
        _ address: [UInt8],
        prefixLength: UInt8 = 24,
        scope: UInt8 = Netlink.Scope.universe,
        flags: UInt32? = nil,
        sequence: UInt32 = 0
    ) -> [UInt8] {
        let family = address.count == 4 ? Netlink.Family.inet : Netlink.Family.inet6
        var payload: [UInt8] = [family, prefixLength, 0x80 /* IFA_F_PERMANENT */, scope]
        payload.appendNative(index)
        if family == Netlink.Family.inet {
            payload += Self.attribute(Netlink.AddressAttribute.local, address)
        }
        payload += Self.attribute(Netlink.AddressAttribute.address, address)
        if let flags {
            payload += Self.attribute(Netlink.AddressAttribute.flags, Self.uint32(flags))
        }
        return NetlinkMessage.encode(type: messageType, flags: 0, sequence: sequence, payload: payload)
    }

    static func route(
        _ messageType: UInt16 = Netlink.MessageType.newRoute,
        family: UInt8 = Netlink.Family.inet,
        destinationLength: UInt8 = 0,
        table: UInt8 = 254,
        type: UInt8 = Netlink.unicastRoute,
        metric: UInt32? = nil,
        gateway: [UInt8]? = nil,
        preferredSource: [UInt8]? = nil,
        outputLink: Int32? = nil,
        multipath: [Int32] = [],
        sequence: UInt32 = 0,
        headerFlags: UInt16 = 0
    ) -> [UInt8] {
        var payload: [UInt8] = [family, destinationLength, 0, 0, table, 3 /* RTPROT_BOOT */, 0, type]
        payload.appendNative(UInt32(0))
        payload += Self.attribute(Netlink.RouteAttribute.table, Self.uint32(UInt32(table)))
        if let metric { payload += Self.attribute(Netlink.RouteAttribute.priority, Self.uint32(metric)) }
        if let gateway { payload += Self.attribute(Netlink.RouteAttribute.gateway, gateway) }
        if let preferredSource { payload += Self.attribute(Netlink.RouteAttribute.preferredSource, preferredSource) }
        if let outputLink {
            payload += Self.attribute(Netlink.RouteAttribute.outputInterface, Self.uint32(UInt32(outputLink)))
        }
        if !multipath.isEmpty {
            var hops: [UInt8] = []
            for link in multipath {
                hops.appendNative(UInt16(8))
                hops += [0, 0]
                hops.appendNative(link)
            }
            payload += Self.attribute(Netlink.RouteAttribute.multipath, hops)
        }
        return NetlinkMessage.encode(type: messageType, flags: headerFlags, sequence: sequence, payload: payload)
    }

    static func done(
        sequence: UInt32,
        error: Int32 = 0,
        headerFlags: UInt16 = Netlink.HeaderFlag.multipart
    ) -> [UInt8] {
        var payload: [UInt8] = []
        payload.appendNative(error)
        return NetlinkMessage.encode(
            type: Netlink.MessageType.done, flags: headerFlags, sequence: sequence, payload: payload
        )
    }

    static func error(sequence: UInt32, code: Int32) -> [UInt8] {
        var payload: [UInt8] = []
        payload.appendNative(code)
        payload += [UInt8](repeating: 0, count: 16)
        return NetlinkMessage.encode(type: Netlink.MessageType.error, flags: 0, sequence: sequence, payload: payload)
    }
}

extension RouteNetlinkModel {
    /// Feeds one datagram; the messages must all be well formed.
    mutating func feed(_ datagram: [UInt8]) throws {
        let (messages, failure) = NetlinkMessage.split(datagram)
        if let failure { throw failure }
        for message in messages {
            self.apply(try RouteNetlinkEvent(decoding: message))
        }
    }
}
#endif
