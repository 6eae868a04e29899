import Testing
@testable import Tether

@Suite struct TetherPlaceholder { @Test func builds() {} }
