import Testing
@testable import TetherCLI

@Suite struct TetherCLIPlaceholder { @Test func builds() {} }
