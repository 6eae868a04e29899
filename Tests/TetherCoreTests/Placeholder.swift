import Testing
@testable import TetherCore

@Suite struct TetherCorePlaceholder { @Test func builds() {} }
