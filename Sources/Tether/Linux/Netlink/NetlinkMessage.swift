#if os(Linux)
/// Values from the Linux UAPI headers (<linux/netlink.h>, <linux/rtnetlink.h>, <linux/if.h>,
/// <linux/if_arp.h>, <linux/if_addr.h>). They are kernel ABI and never change, so they are spelled out here and
/// the parser and model compile and are tested on every platform. Integers are in host byte order.
enum Netlink {
    static let headerSize = 16
    static let attributeHeaderSize = 4

    /// `NLMSG_ALIGN` / `RTA_ALIGN`: netlink messages and attributes start on 4-byte boundaries.
    static func aligned(_ length: Int) -> Int { (length + 3) & ~3 }

    enum MessageType {
        static let noop: UInt16 = 1
        static let error: UInt16 = 2
        static let done: UInt16 = 3
        static let overrun: UInt16 = 4
        static let newLink: UInt16 = 16
        static let deleteLink: UInt16 = 17
        static let getLink: UInt16 = 18
        static let newAddress: UInt16 = 20
        static let deleteAddress: UInt16 = 21
        static let getAddress: UInt16 = 22
        static let newRoute: UInt16 = 24
        static let deleteRoute: UInt16 = 25
        static let getRoute: UInt16 = 26
    }

    enum HeaderFlag {
        static let request: UInt16 = 0x1
        static let multipart: UInt16 = 0x2
        static let dumpInterrupted: UInt16 = 0x10
        /// `NLM_F_ROOT | NLM_F_MATCH` on a GET request.
        static let dump: UInt16 = 0x300
        /// On a NEW request or notification: this replaces an existing object.
        static let replace: UInt16 = 0x100
    }

    enum Family {
        static let unspecified: UInt8 = 0
        static let inet: UInt8 = 2
        static let inet6: UInt8 = 10
    }

    enum LinkFlag {
        static let up: UInt32 = 0x1
        static let loopback: UInt32 = 0x8
        /// Operationally up (carrier present, not dormant).
        static let running: UInt32 = 0x40
    }

    /// `ARPHRD_*` link types.
    enum LinkType {
        static let ether: UInt16 = 1
        static let ppp: UInt16 = 512
        /// Raw IP, used by cellular modems (qmi_wwan, mhi).
        static let rawIP: UInt16 = 519
        static let loopback: UInt16 = 772
        static let none: UInt16 = 0xFFFE
    }

    enum LinkAttribute {
        static let name: UInt16 = 3
        static let linkInfo: UInt16 = 18
        /// Nested inside `linkInfo`.
        static let infoKind: UInt16 = 1
    }

    enum AddressAttribute {
        static let address: UInt16 = 1
        static let local: UInt16 = 2
        static let flags: UInt16 = 8
    }

    enum AddressFlag {
        static let dadFailed: UInt32 = 0x08
        static let tentative: UInt32 = 0x40
    }

    enum Scope {
        static let universe: UInt8 = 0
        static let link: UInt8 = 253
    }

    enum RouteAttribute {
        static let outputInterface: UInt16 = 4
        static let gateway: UInt16 = 5
        static let priority: UInt16 = 6
        static let preferredSource: UInt16 = 7
        static let multipath: UInt16 = 9
        static let table: UInt16 = 15
    }

    static let mainTable: UInt32 = 254
    static let unicastRoute: UInt8 = 1

    /// `NLA_TYPE_MASK`: the top two bits of an attribute type are the nested and byte-order flags.
    static let attributeTypeMask: UInt16 = 0x3FFF
}

/// A netlink message or attribute that does not fit the bytes that carry it.
enum NetlinkParseError: Error, Equatable, Sendable {
    /// Fewer bytes than a message header remain.
    case truncatedHeader(available: Int)
    /// The header's length is below the header size or beyond the datagram.
    case invalidMessageLength(declared: Int, available: Int)
    /// The message is shorter than the fixed structure its type starts with.
    case truncatedPayload(messageType: UInt16, needed: Int, available: Int)
    /// An attribute's length is below the attribute header size or beyond its container.
    case invalidAttributeLength(declared: Int, available: Int)
    /// An attribute has the wrong size for its type.
    case invalidAttributeValue(attributeType: UInt16, length: Int)
}

/// One netlink message: the header's fields and the payload after the header.
struct NetlinkMessage: Equatable, Sendable {
    var type: UInt16
    var flags: UInt16
    var sequence: UInt32
    var portID: UInt32
    var payload: ArraySlice<UInt8>

    /// Splits a datagram into its messages. A malformed message ends the walk: the messages before it are
    /// returned with the error, because nothing after a bad length can be trusted.
    static func split(_ datagram: [UInt8]) -> (messages: [NetlinkMessage], failure: NetlinkParseError?) {
        var messages: [NetlinkMessage] = []
        var offset = 0
        while offset < datagram.count {
            let available = datagram.count - offset
            guard available >= Netlink.headerSize else {
                return (messages, .truncatedHeader(available: available))
            }
            let length = Int(datagram.loadNative(UInt32.self, at: offset))
            guard length >= Netlink.headerSize, length <= available else {
                return (messages, .invalidMessageLength(declared: length, available: available))
            }
            messages.append(
                NetlinkMessage(
                    type: datagram.loadNative(UInt16.self, at: offset + 4),
                    flags: datagram.loadNative(UInt16.self, at: offset + 6),
                    sequence: datagram.loadNative(UInt32.self, at: offset + 8),
                    portID: datagram.loadNative(UInt32.self, at: offset + 12),
                    payload: datagram[(offset + Netlink.headerSize)..<(offset + length)]
                )
            )
            offset += min(Netlink.aligned(length), available)
        }
        return (messages, nil)
    }

    /// The bytes of a message with this header and payload (the payload is padded to the alignment).
    static func encode(type: UInt16, flags: UInt16, sequence: UInt32, portID: UInt32 = 0, payload: [UInt8])
        -> [UInt8]
    {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Netlink.headerSize + Netlink.aligned(payload.count))
        bytes.appendNative(UInt32(Netlink.headerSize + payload.count))
        bytes.appendNative(type)
        bytes.appendNative(flags)
        bytes.appendNative(sequence)
        bytes.appendNative(portID)
        bytes += payload
        bytes += repeatElement(0, count: Netlink.aligned(payload.count) - payload.count)
        return bytes
    }
}

/// The attributes (`struct rtattr` / `struct nlattr`) in a region, by type; the last one wins on duplicates.
struct NetlinkAttributes: Sendable {
    private var values: [UInt16: ArraySlice<UInt8>] = [:]

    init(parsing region: ArraySlice<UInt8>) throws(NetlinkParseError) {
        var offset = region.startIndex
        while offset < region.endIndex {
            let available = region.endIndex - offset
            guard available >= Netlink.attributeHeaderSize else {
                throw .invalidAttributeLength(declared: available, available: available)
            }
            let length = Int(region.loadNative(UInt16.self, at: offset - region.startIndex))
            guard length >= Netlink.attributeHeaderSize, length <= available else {
                throw .invalidAttributeLength(declared: length, available: available)
            }
            let type = region.loadNative(UInt16.self, at: offset + 2 - region.startIndex) & Netlink.attributeTypeMask
            self.values[type] = region[(offset + Netlink.attributeHeaderSize)..<(offset + length)]
            offset += min(Netlink.aligned(length), available)
        }
    }

    subscript(type: UInt16) -> ArraySlice<UInt8>? { self.values[type] }

    func uint32(_ type: UInt16) throws(NetlinkParseError) -> UInt32? {
        guard let value = self.values[type] else { return nil }
        guard value.count == 4 else { throw .invalidAttributeValue(attributeType: type, length: value.count) }
        return value.loadNative(UInt32.self, at: 0)
    }

    /// A NUL-terminated string attribute (a missing terminator is tolerated).
    func string(_ type: UInt16) -> String? {
        guard let value = self.values[type] else { return nil }
        let characters = value.prefix { $0 != 0 }
        return String(decoding: characters, as: UTF8.self)
    }
}

extension Collection<UInt8> where Index == Int {
    /// Reads a host-order integer at `offset` from the start of the collection. The caller checks the bounds.
    func loadNative<T: FixedWidthInteger>(_: T.Type, at offset: Int) -> T {
        var value: T = 0
        withUnsafeMutableBytes(of: &value) { target in
            for index in 0..<MemoryLayout<T>.size {
                target[index] = self[self.startIndex + offset + index]
            }
        }
        return value
    }
}

extension Array<UInt8> {
    mutating func appendNative<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value) { self += $0 }
    }
}
#endif
