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

/// One piece of evidence: a measured value worth showing (close reason, code, timings).
package struct Evidence: Equatable, Sendable {
    package var key: String
    package var value: String

    package init(key: String, value: String) {
        self.key = key
        self.value = value
    }
}

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

/// The timings `tether check` runs with: short, so that the whole matrix takes a few seconds.
package struct CheckTiming: Equatable, Sendable {
    /// Heartbeat interval, ms.
    package var interval = 50
    /// Pong timeout, ms.
    package var timeout = 100
    /// First backoff delay, ms (factor 2, jitter 0–50 %).
    package var backoffBase = 40
    /// Backoff cap, ms.
    package var backoffCap = 2_000
    /// How late a timer may fire on a busy machine before a timing check fails, ms.
    package var tolerance = 100
    /// The longest any single wait may take before the scenario fails.
    package var waitLimit = Duration.seconds(5)
    /// How much the process's resident memory may grow during a flood scenario: room for the client's bounded
    /// buffers (1 MiB each way by default) and the allocator, and a quarter of the 64 MiB a client without bounds
    /// would hold. Bytes. A run in a process shared with other work (the test suite) raises it: theirs counts too.
    package var residentGrowthLimit = 16 << 20

    package init() {}
}
