import Testing
@testable import TetherPOSIX

@Suite struct TetherPOSIXPlaceholder { @Test func builds() {} }
