import Foundation
import Testing
import TetherCore
@testable import TetherCLI

@Suite struct CheckReportTests {
    static let passing = ScenarioResult(
        name: "pong-delay-past", title: "late pong", server: "accept, pong delayed 400 ms",
        checks: [CheckResult(name: "one close", passed: true, detail: "pong_timeout 1001")],
        evidence: [Evidence(key: "reason", value: "pong_timeout"), Evidence(key: "code", value: "1001")],
        error: nil,
        records: [
            LogRecord(generation: 1, time: 0, from: .stopped, to: .connecting, event: .connecting(attempt: 0)),
            LogRecord(generation: 1, time: 151, from: .open, to: .waiting, event: .closed(reason: .pongTimeout, code: 1001)),
        ],
        durationMilliseconds: 190)
    static let failing = ScenarioResult(
        name: "handshake-401", title: "401", server: "reject 401",
        checks: [
            CheckResult(name: "failed visibly", passed: false, detail: "waiting"),
            CheckResult(name: "one handshake", passed: true, detail: "1"),
        ],
        evidence: [], error: "timed out waiting for the rejection", records: [], durationMilliseconds: 5000)

    @Test func summaryHasPassCountsEvidenceAndOnlyTheFailedChecks() throws {
        let report = CheckReport(results: [Self.passing, Self.failing], timing: CheckTiming())
        let text = report.summary(jsonPath: "/out/tether-report.json", htmlPath: "/out/tether-report.html")
            .serialized(pretty: true)
        let summary = try #require(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(summary["passed"] as? Bool == false)
        #expect(summary["total"] as? Int == 2)
        #expect(summary["failed"] as? Int == 1)
        let scenarios = try #require(summary["scenarios"] as? [[String: Any]])
        #expect(scenarios.map { $0["name"] as? String } == ["pong-delay-past", "handshake-401"])
        #expect(scenarios[0]["passed"] as? Bool == true)
        #expect((scenarios[0]["evidence"] as? [String: String]) == ["reason": "pong_timeout", "code": "1001"])
        #expect((scenarios[0]["failed_checks"] as? [Any])?.isEmpty == true)
        #expect(scenarios[0]["error"] is NSNull)
        let failed = try #require(scenarios[1]["failed_checks"] as? [[String: Any]])
        #expect(failed.count == 1 && failed[0]["name"] as? String == "failed visibly")
        #expect(scenarios[1]["error"] as? String == "timed out waiting for the rejection")
        let files = try #require(summary["report"] as? [String: String])
        #expect(files == ["json": "/out/tether-report.json", "html": "/out/tether-report.html"])
    }

    @Test func reportCarriesTheFullTimelineWithTheJSONLKeys() throws {
        let report = CheckReport(results: [Self.passing], timing: CheckTiming())
        let parsed = try #require(
            JSONSerialization.jsonObject(with: Data(report.json.serialized(pretty: true).utf8)) as? [String: Any])
        #expect(parsed["passed"] as? Bool == true)
        let scenario = try #require((parsed["scenarios"] as? [[String: Any]])?.first)
        let timeline = try #require(scenario["timeline"] as? [[String: Any]])
        #expect(timeline.count == 2)
        #expect(timeline[1]["event"] as? String == "closed")
        #expect(timeline[1]["reason"] as? String == "pong_timeout")
        #expect(timeline[1]["code"] as? Int == 1001)
        #expect(timeline[1]["t"] as? Int == 151)
    }

    @Test func aScenarioWithoutChecksOrWithAnErrorFails() {
        var empty = Self.passing
        empty.checks = []
        #expect(!empty.passed)
        var errored = Self.passing
        errored.error = "timed out"
        #expect(!errored.passed)
        #expect(!CheckReport(results: [], timing: CheckTiming()).passed)
    }

    @Test func htmlIsSelfContainedWithOneTimelinePerScenario() {
        let html = HTMLReport.render(CheckReport(results: [Self.passing, Self.failing], timing: CheckTiming()))
        // The legend is one more picture.
        #expect(html.components(separatedBy: "<svg").count - 1 == 3)
        #expect(!html.contains("http://") && !html.contains("https://") && !html.contains("<script"))
        #expect(html.contains("pong_timeout 1001 → waiting"))
        #expect(html.contains("timed out waiting for the rejection"))
    }
}
