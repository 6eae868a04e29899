import Testing
@testable import TetherWire

@Suite struct MessageAssemblerTests {
    func header(_ opcode: Opcode, fin: Bool = true, length: Int) -> FrameHeader {
        FrameHeader(fin: fin, opcode: opcode, maskingKey: nil, payloadLength: length)
    }

    func consume(_ assembler: inout MessageAssembler, _ opcode: Opcode, fin: Bool = true,
                 _ payload: [UInt8]) throws(ProtocolError) -> MessageAssembler.Assembly {
        var result: Result<MessageAssembler.Assembly, ProtocolError> = .success(.incomplete)
        payload.withUnsafeBytes { bytes in
            do throws(ProtocolError) {
                result = .success(try assembler.consume(self.header(opcode, fin: fin, length: bytes.count),
                                                        payload: bytes))
            } catch {
                result = .failure(error)
            }
        }
        return try result.get()
    }

    @Test func continuationWithoutOpenMessageIs1002() {
        var assembler = MessageAssembler()
        #expect(throws: ProtocolError(.unexpectedContinuation)) { try self.consume(&assembler, .continuation, [1]) }
        #expect(ProtocolError(.unexpectedContinuation).closeCode == 1002)
    }

    @Test func newDataFrameWhileMessageOpenIs1002() throws {
        var assembler = MessageAssembler()
        #expect(try self.consume(&assembler, .binary, fin: false, [1]) == .incomplete)
        #expect(throws: ProtocolError(.dataFrameInsideMessage)) { try self.consume(&assembler, .text, [0x41]) }
    }

    @Test func controlFramesInsideFragmentedMessagePassThroughAndMessageCompletes() throws {
        var assembler = MessageAssembler()
        #expect(try self.consume(&assembler, .text, fin: false, Array("Hel".utf8)) == .incomplete)
        #expect(try self.consume(&assembler, .ping, [7]) == .frame(.ping))
        #expect(assembler.isMessageOpen)
        #expect(try self.consume(&assembler, .pong, []) == .frame(.pong))
        #expect(try self.consume(&assembler, .continuation, fin: false, []) == .incomplete)
        #expect(try self.consume(&assembler, .continuation, Array("lo".utf8)) == .assembled(.text))
        #expect(assembler.withAssembledPayload { Array($0) } == Array("Hello".utf8))
        #expect(!assembler.isMessageOpen)
        #expect(try self.consume(&assembler, .binary, [1, 2]) == .frame(.binary))
    }

    @Test func invalidUTF8IsRejectedInTheFragmentWhereItAppears() throws {
        var assembler = MessageAssembler()
        #expect(try self.consume(&assembler, .text, fin: false, Array("valid".utf8)) == .incomplete)
        let failure = #expect(throws: ProtocolError.self) {
            try self.consume(&assembler, .continuation, fin: false, [0x41, 0xC0, 0x80])
        }
        #expect(failure == ProtocolError(.invalidUTF8))
        #expect(failure?.closeCode == 1007)
    }

    @Test func codePointSplitAcrossFragmentsIsAccepted() throws {
        var assembler = MessageAssembler()
        let text = Array("a🌍b".utf8)  // the emoji is 4 bytes at offsets 1..<5
        for split in 1..<text.count {
            #expect(try self.consume(&assembler, .text, fin: false, Array(text[..<split])) == .incomplete)
            #expect(try self.consume(&assembler, .continuation, Array(text[split...])) == .assembled(.text))
            #expect(assembler.withAssembledPayload { Array($0) } == text)
        }
    }

    @Test func textEndingInsideACodePointIs1007AtTheFinalFragment() throws {
        var assembler = MessageAssembler()
        #expect(try self.consume(&assembler, .text, fin: false, [0x41, 0xF0, 0x9F]) == .incomplete)
        #expect(throws: ProtocolError(.invalidUTF8)) { try self.consume(&assembler, .continuation, [0x8C]) }
    }

    @Test func unfragmentedInvalidTextIs1007() {
        var assembler = MessageAssembler()
        #expect(throws: ProtocolError(.invalidUTF8)) { try self.consume(&assembler, .text, [0xED, 0xA0, 0x80]) }
    }

    @Test func binaryIsNotValidatedAsUTF8() throws {
        var assembler = MessageAssembler()
        #expect(try self.consume(&assembler, .binary, [0xFF, 0xC0]) == .frame(.binary))
    }

    @Test func messageOverMaximumIs1009FromTheHeaderAlone() throws {
        var assembler = MessageAssembler(maximumMessageSize: 10)
        #expect(throws: ProtocolError(.messageTooBig(limit: 10))) {
            try assembler.validate(self.header(.binary, length: 11))
        }
        #expect(try self.consume(&assembler, .binary, fin: false, [UInt8](repeating: 0, count: 6)) == .incomplete)
        let failure = #expect(throws: ProtocolError.self) {
            try assembler.validate(self.header(.continuation, length: 5))
        }
        #expect(failure?.closeCode == 1009)
        #expect(try self.consume(&assembler, .continuation, [1, 2, 3, 4]) == .assembled(.binary))
    }

    @Test func closePayloadOfOneByteIs1002() {
        var assembler = MessageAssembler()
        #expect(throws: ProtocolError(.closePayloadTooShort)) { try self.consume(&assembler, .close, [0x03]) }
    }

    @Test func closeCodesInvalidOnTheWireAre1002() {
        for code: UInt16 in [0, 999, 1004, 1005, 1006, 1015, 1016, 2999, 5000, 65535] {
            var assembler = MessageAssembler()
            let failure = #expect(throws: ProtocolError.self) {
                try self.consume(&assembler, .close, [UInt8(code >> 8), UInt8(code & 0xFF)])
            }
            #expect(failure == ProtocolError(.invalidCloseCode(code)))
            #expect(failure?.closeCode == 1002)
        }
    }

    @Test func closeCodesValidOnTheWireAndEmptyCloseAreAccepted() throws {
        for code: UInt16 in [1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014, 3000, 4999] {
            var assembler = MessageAssembler()
            #expect(try self.consume(&assembler, .close, [UInt8(code >> 8), UInt8(code & 0xFF)]) == .frame(.close))
        }
        var assembler = MessageAssembler()
        #expect(try self.consume(&assembler, .close, []) == .frame(.close))
    }

    @Test func closeReasonThatIsNotUTF8Is1007() {
        var assembler = MessageAssembler()
        let failure = #expect(throws: ProtocolError.self) { try self.consume(&assembler, .close, [0x03, 0xE8, 0xFF]) }
        #expect(failure == ProtocolError(.invalidCloseReason))
        #expect(failure?.closeCode == 1007)
    }
}
