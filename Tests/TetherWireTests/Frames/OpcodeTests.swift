import Testing
@testable import TetherWire

@Suite struct OpcodeTests {
    @Test func controlOpcodesHaveTheHighBitAndReservedOnesAreUnknown() {
        #expect(Opcode.close.isControl && Opcode.ping.isControl && Opcode.pong.isControl)
        #expect(!Opcode.text.isControl && !Opcode.binary.isControl && !Opcode.continuation.isControl)
        #expect(Opcode(rawValue: 0xB).isControl && !Opcode(rawValue: 0xB).isKnown)
    }

    @Test func rawValueKeepsTheFourBitField() {
        #expect(Opcode(rawValue: 0xF1) == .text)
        #expect(Opcode(rawValue: 0x3).description == "opcode(3)")
    }
}
