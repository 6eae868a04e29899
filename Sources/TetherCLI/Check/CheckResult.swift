import TetherCore

/// One expectation of a scenario and whether it held.
package struct CheckResult: Equatable, Sendable {
    /// What was expected, for example `"one close, reason pong_timeout"`.
    package var name: String
    package var passed: Bool
    /// What was measured, for example `"close 101 ms after the ping"`.
    package var detail: String

    package init(name: String, passed: Bool, detail: String) {
        self.name = name
        self.passed = passed
        self.detail = detail
    }
}
