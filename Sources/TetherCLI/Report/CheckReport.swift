import TetherCore

/// The acceptance record of one `tether check` run: every scenario with its checks, evidence and full
/// event-record timeline.
package struct CheckReport: Sendable {
    package var results: [ScenarioResult]
    package var timing: CheckTiming

    package init(results: [ScenarioResult], timing: CheckTiming) {
        self.results = results
        self.timing = timing
    }

    /// Every scenario passed (and there was at least one).
    package var passed: Bool { !self.results.isEmpty && self.results.allSatisfy(\.passed) }

    /// `tether-report.json`: timings, then each scenario with `timeline`, an array of event records with the
    /// keys of `tether connect --events jsonl`.
    package var json: JSONValue {
        .object([
            ("tool", .string("tether check")),
            ("passed", .bool(self.passed)),
            ("timing", self.timingJSON),
            ("scenarios", .array(self.results.map { result in
                .object([
                    ("name", .string(result.name)),
                    ("title", .string(result.title)),
                    ("passed", .bool(result.passed)),
                    ("duration_ms", .int(result.durationMilliseconds)),
                    ("server", .string(result.server)),
                    ("error", result.error.map(JSONValue.string) ?? .null),
                    ("evidence", Self.evidenceJSON(result.evidence)),
                    ("checks", .array(result.checks.map(Self.checkJSON))),
                    ("timeline", .array(result.records.map(\.json))),
                    ("steps", .array(result.marks.map { mark in
                        .object([("t", .int(mark.time)), ("label", .string(mark.label))])
                    })),
                ])
            })),
        ])
    }

    /// `tether check --json`: pass/fail, evidence and failed checks per scenario, and where the report is.
    package func summary(jsonPath: String, htmlPath: String) -> JSONValue {
        .object([
            ("passed", .bool(self.passed)),
            ("total", .int(self.results.count)),
            ("failed", .int(self.results.filter { !$0.passed }.count)),
            ("scenarios", .array(self.results.map { result in
                .object([
                    ("name", .string(result.name)),
                    ("passed", .bool(result.passed)),
                    ("duration_ms", .int(result.durationMilliseconds)),
                    ("evidence", Self.evidenceJSON(result.evidence)),
                    ("error", result.error.map(JSONValue.string) ?? .null),
                    ("failed_checks", .array(result.checks.filter { !$0.passed }.map(Self.checkJSON))),
                ])
            })),
            ("report", .object([("json", .string(jsonPath)), ("html", .string(htmlPath))])),
        ])
    }

    private var timingJSON: JSONValue {
        .object([
            ("heartbeat_interval_ms", .int(self.timing.interval)),
            ("heartbeat_timeout_ms", .int(self.timing.timeout)),
            ("backoff_base_ms", .int(self.timing.backoffBase)),
            ("backoff_cap_ms", .int(self.timing.backoffCap)),
            ("tolerance_ms", .int(self.timing.tolerance)),
        ])
    }

    private static func evidenceJSON(_ evidence: [Evidence]) -> JSONValue {
        .object(evidence.map { ($0.key, .string($0.value)) })
    }

    private static func checkJSON(_ check: CheckResult) -> JSONValue {
        .object([("name", .string(check.name)), ("passed", .bool(check.passed)), ("detail", .string(check.detail))])
    }
}
