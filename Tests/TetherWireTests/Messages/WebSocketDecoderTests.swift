import Testing
import TetherWire

@Suite struct WebSocketDecoderTests {
    // RFC 6455 §5.7 examples.

    @Test func singleFrameUnmaskedTextFromServerDecodesToHello() throws {
        var decoder = WebSocketDecoder(role: .client)
        decoder.append(hex("81 05 48 65 6c 6c 6f"))
        #expect(try decoder.next() == .text("Hello"))
        #expect(try decoder.next() == nil)
    }

    @Test func singleFrameMaskedTextFromClientDecodesToHello() throws {
        var decoder = WebSocketDecoder(role: .server)
        decoder.append(hex("81 85 37 fa 21 3d 7f 9f 4d 51 58"))
        #expect(try decoder.next() == .text("Hello"))
    }

    @Test func fragmentedUnmaskedTextAssemblesToHello() throws {
        var decoder = WebSocketDecoder(role: .client)
        decoder.append(hex("01 03 48 65 6c"))
        #expect(try decoder.next() == nil)
        decoder.append(hex("80 02 6c 6f"))
        #expect(try decoder.next() == .text("Hello"))
    }

    @Test func unmaskedPingAndMaskedPongCarryHello() throws {
        var client = WebSocketDecoder(role: .client)
        client.append(hex("89 05 48 65 6c 6c 6f"))
        #expect(try client.next() == .ping(Array("Hello".utf8)))
        var server = WebSocketDecoder(role: .server)
        server.append(hex("8a 85 37 fa 21 3d 7f 9f 4d 51 58"))
        #expect(try server.next() == .pong(Array("Hello".utf8)))
    }

    @Test func binaryWith256BytesUses16BitLength() throws {
        var decoder = WebSocketDecoder(role: .client)
        let payload = (0..<256).map { UInt8(truncatingIfNeeded: $0) }
        decoder.append(hex("82 7E 01 00") + payload)
        #expect(try decoder.next() == .binary(payload))
    }

    @Test func binaryWith64KiBUses64BitLength() throws {
        var decoder = WebSocketDecoder(role: .client)
        let payload = (0..<65536).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        decoder.append(hex("82 7F 00 00 00 00 00 01 00 00") + payload)
        #expect(try decoder.next() == .binary(payload))
    }
}
