import Testing
@testable import TetherTestServer

@Suite struct TetherTestServerPlaceholder { @Test func builds() {} }
