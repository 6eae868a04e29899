import Testing
@testable import TetherWire

@Suite struct CloseCodeTests {
    @Test func rawValuesRoundTripThroughNamedCasesAndUnknown() {
        for raw: UInt16 in [0, 999, 1000, 1001, 1002, 1003, 1004, 1005, 1006, 1007, 1008, 1009, 1010, 1011, 1012,
                            1013, 1014, 1015, 1016, 2999, 3000, 4999, 5000, 65535] {
            #expect(CloseCode(rawValue: raw).rawValue == raw)
        }
        #expect(CloseCode(rawValue: 1000) == .normalClosure)
        #expect(CloseCode(rawValue: 1013) == .tryAgainLater)
        #expect(CloseCode(rawValue: 1004) == .unknown(1004))
        #expect(CloseCode(rawValue: 4000) == .unknown(4000))
    }

    @Test func onlyRFC6455Section74CodesAreValidOnTheWire() {
        for raw in UInt16(0)...UInt16(5100) {
            let expected = (1000...1003).contains(raw) || (1007...1014).contains(raw) || (3000...4999).contains(raw)
            #expect(CloseCode(rawValue: raw).isValidOnWire == expected, "code \(raw)")
        }
        #expect(!CloseCode.noStatusReceived.isValidOnWire)
        #expect(!CloseCode.abnormalClosure.isValidOnWire)
        #expect(!CloseCode.tlsHandshake.isValidOnWire)
        #expect(!CloseCode(rawValue: 65535).isValidOnWire)
    }
}
