import TetherCore

/// The outcome of one scenario of `tether check`.
package struct ScenarioResult: Sendable {
    package var name: String
    package var title: String
    /// What the embedded server did, for example `"accept, pong delayed 400 ms"`.
    package var server: String
    package var checks: [CheckResult]
    package var evidence: [Evidence]
    /// The scenario could not finish its steps (for example a wait timed out).
    package var error: String?
    /// The client's full event-record timeline (times in ms since the client was created).
    package var records: [LogRecord]
    /// The scenario's own steps on the same time axis as `records`.
    package var marks: [StepMark] = []
    package var durationMilliseconds: Int

    /// Every check held, there was at least one, and nothing went wrong on the way.
    package var passed: Bool {
        self.error == nil && !self.checks.isEmpty && self.checks.allSatisfy(\.passed)
    }

    /// The evidence as one short line for the table.
    package var evidenceLine: String {
        self.evidence.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
    }
}
