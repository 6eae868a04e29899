import Testing
@testable import TetherWire

@Suite struct ProtocolErrorTests {
    static let kinds: [ProtocolError.Kind] = [
        .reservedBitsSet(4), .unknownOpcode(3), .controlFrameTooLong(126), .fragmentedControlFrame, .lengthTopBitSet,
        .nonMinimalLength, .maskedFrameFromServer, .unmaskedFrameFromClient, .frameTooBig(length: 2, limit: 1),
        .messageTooBig(limit: 1), .unexpectedContinuation, .dataFrameInsideMessage, .invalidUTF8,
        .closePayloadTooShort, .invalidCloseCode(1005), .invalidCloseReason,
    ]

    @Test func eachKindCarriesTheCloseCodeRFC6455Prescribes() {
        for kind in Self.kinds {
            let expected: UInt16 =
                switch kind {
                case .invalidUTF8, .invalidCloseReason: 1007
                case .frameTooBig, .messageTooBig: 1009
                default: 1002
                }
            #expect(ProtocolError(kind).closeCode == expected, "\(kind)")
        }
    }

    @Test func reasonsFitInACloseFrameAndCanBeSentWithTheCode() throws {
        for kind in Self.kinds {
            let error = ProtocolError(kind)
            #expect(!error.reason.isEmpty && error.reason.utf8.count <= 123)
            var encoder = WebSocketEncoder(role: .server)
            var buffer: [UInt8] = []
            try encoder.close(code: error.closeCode, reason: error.reason, into: &buffer)
            var decoder = WebSocketDecoder(role: .client)
            decoder.append(buffer)
            #expect(try decoder.next() == .close(code: error.closeCode, reason: error.reason))
        }
    }
}
