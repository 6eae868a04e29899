import Testing
import TetherWire

@Suite struct WebSocketEncoderTests {
    @Test func serverTextHelloIsRFCUnmaskedFrame() {
        var encoder = WebSocketEncoder(role: .server)
        var buffer: [UInt8] = []
        encoder.text("Hello", into: &buffer)
        #expect(buffer == hex("81 05 48 65 6c 6c 6f"))
    }

    @Test func clientTextHelloWithRFCKeyIsRFCMaskedFrame() {
        // FixedRandom's low 32 bits become the key 37 fa 21 3d.
        var encoder = WebSocketEncoder(role: .client, random: FixedRandom(value: 0x37FA_213D))
        var buffer: [UInt8] = []
        encoder.text("Hello", into: &buffer)
        #expect(buffer == hex("81 85 37 fa 21 3d 7f 9f 4d 51 58"))
    }

    @Test func serverFragmentsHelloAtThreeBytesLikeRFC() {
        var encoder = WebSocketEncoder(role: .server, fragmentSize: 3)
        var buffer: [UInt8] = []
        encoder.text("Hello", into: &buffer)
        #expect(buffer == hex("01 03 48 65 6c 80 02 6c 6f"))
    }
}
