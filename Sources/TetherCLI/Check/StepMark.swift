import TetherCore

/// A step the scenario took, placed on the client's timeline (for example `"stop()"` or an injected callback).
package struct StepMark: Equatable, Sendable {
    /// Milliseconds since the client was created, like the records' `t`.
    package var time: Int
    package var label: String

    package init(time: Int, label: String) {
        self.time = time
        self.label = label
    }
}
