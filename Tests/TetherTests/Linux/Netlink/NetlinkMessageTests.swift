#if os(Linux)
import Testing
@testable import Tether

@Suite struct NetlinkMessageTests {
    typealias Bytes = RouteNetlinkBytes

    /// A link, an address and a route in one datagram.
    static let datagram = Bytes.link(index: 2, name: "eth0", kind: "veth")
        + Bytes.address(index: 2, [192, 0, 2, 1])
        + Bytes.route(gateway: [192, 0, 2, 254], outputLink: 2)

    @Test func datagramSplitsIntoItsMessagesAndDecodes() throws {
        let (messages, failure) = NetlinkMessage.split(Self.datagram)
        #expect(failure == nil)
        #expect(messages.map(\.type) == [16, 20, 24])
        let events = try messages.map { message throws(NetlinkParseError) in try RouteNetlinkEvent(decoding: message) }
        #expect(
            events[0]
                == .linkChanged(LinkRecord(index: 2, type: 1, flags: Bytes.upAndRunning, name: "eth0", kind: "veth"))
        )
        #expect(
            events[1]
                == .addressAdded(
                    AddressRecord(
                        linkIndex: 2, family: 2, prefixLength: 24, scope: 0, flags: 0x80, address: [192, 0, 2, 1]
                    )
                )
        )
        #expect(
            events[2]
                == .routeAdded(
                    RouteRecord(
                        family: 2, destinationLength: 0, typeOfService: 0, table: 254, type: 1, metric: 0,
                        gateway: [192, 0, 2, 254], preferredSource: [], outputLinks: [2]
                    ),
                    replacing: false
                )
        )
    }

    @Test func truncatedHeaderIsReportedAfterTheGoodMessages() {
        let (messages, failure) = NetlinkMessage.split(Bytes.link(index: 2, name: "eth0") + [1, 2, 3])
        #expect(messages.count == 1)
        #expect(failure == .truncatedHeader(available: 3))
    }

    @Test func lengthBeyondTheDatagramIsReported() {
        var bytes = Bytes.link(index: 2, name: "eth0")
        bytes[0] &+= 4
        let (messages, failure) = NetlinkMessage.split(bytes)
        #expect(messages.isEmpty)
        #expect(failure == .invalidMessageLength(declared: bytes.count + 4, available: bytes.count))
    }

    @Test func zeroLengthMessageIsReportedInsteadOfLoopingForever() {
        let (messages, failure) = NetlinkMessage.split([UInt8](repeating: 0, count: 32))
        #expect(messages.isEmpty)
        #expect(failure == .invalidMessageLength(declared: 0, available: 32))
    }

    @Test func linkMessageShorterThanItsHeaderThrows() {
        let message = NetlinkMessage(
            type: Netlink.MessageType.newLink, flags: 0, sequence: 0, portID: 0, payload: [0, 0, 1]
        )
        #expect(throws: NetlinkParseError.truncatedPayload(messageType: 16, needed: 16, available: 3)) {
            try RouteNetlinkEvent(decoding: message)
        }
    }

    @Test func attributeLongerThanItsMessageThrows() {
        var bytes = Bytes.link(index: 2, name: "eth0")
        // The name attribute starts after the 16-byte netlink header and the 16-byte ifinfomsg.
        bytes[32] = 200
        let (messages, _) = NetlinkMessage.split(bytes)
        #expect(throws: NetlinkParseError.invalidAttributeLength(declared: 200, available: 12)) {
            try RouteNetlinkEvent(decoding: messages[0])
        }
    }

    @Test func integerAttributeOfTheWrongSizeThrows() {
        var payload: [UInt8] = [2, 0, 0, 0, 254, 0, 0, 1, 0, 0, 0, 0]
        payload += Bytes.attribute(Netlink.RouteAttribute.outputInterface, [2, 0])
        let message = NetlinkMessage(
            type: Netlink.MessageType.newRoute, flags: 0, sequence: 0, portID: 0, payload: payload[...]
        )
        #expect(throws: NetlinkParseError.invalidAttributeValue(attributeType: 4, length: 2)) {
            try RouteNetlinkEvent(decoding: message)
        }
    }

    @Test func everyTruncationOfADatagramYieldsAPrefixOfItsMessages() throws {
        let (all, _) = NetlinkMessage.split(Self.datagram)
        for length in 0..<Self.datagram.count {
            let (messages, _) = NetlinkMessage.split(Array(Self.datagram.prefix(length)))
            #expect(messages == Array(all.prefix(messages.count)))
            for message in messages {
                _ = try RouteNetlinkEvent(decoding: message)
            }
        }
    }

    @Test func everyTruncatedPayloadDecodesOrThrowsWithoutCrashing() {
        let (all, _) = NetlinkMessage.split(Self.datagram)
        for message in all {
            for length in 0...message.payload.count {
                var cut = message
                cut.payload = message.payload.prefix(length)
                _ = try? RouteNetlinkEvent(decoding: cut)
            }
        }
    }

    @Test func randomBytesNeverCrashTheTracker() {
        var random = SplitMix64(seed: 0x7e7e_7e7e)
        var tracker = RouteNetlinkTracker()
        _ = tracker.resynchronize()
        for round in 0..<3000 {
            var bytes = (0..<Int(random.next() % 96)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            if round % 2 == 0, bytes.count >= 16 {
                // A plausible header, so that the random bytes reach the payload and attribute walks.
                let length = UInt32(bytes.count)
                let type = [UInt16(16), 17, 20, 21, 24, 25, 2, 3, 4][Int(random.next() % 9)]
                bytes.replaceSubrange(0..<4, with: Swift.withUnsafeBytes(of: length) { Array($0) })
                bytes.replaceSubrange(4..<6, with: Swift.withUnsafeBytes(of: type) { Array($0) })
            }
            _ = tracker.receive(bytes)
        }
    }
}

/// A small deterministic generator, so that a failing random input can be replayed.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        self.state = seed
    }

    mutating func next() -> UInt64 {
        self.state &+= 0x9E37_79B9_7F4A_7C15
        var value = self.state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }
}
#endif
