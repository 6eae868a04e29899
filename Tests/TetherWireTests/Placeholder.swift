import Testing
@testable import TetherWire

@Suite struct TetherWirePlaceholder { @Test func builds() {} }
