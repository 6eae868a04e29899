import Foundation
import Testing
@testable import TetherCLI
import TetherTestSupport

@Suite struct CheckCommandTests {
    func temporaryDirectory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("tether-check-\(UUID().uuidString)")
    }

    /// Every scenario, in-process, while the rest of the suite runs beside it on the same two cores: with the
    /// check's timings scaled up (every scenario derives its delays and windows from them), so that a busy
    /// machine cannot fail a deadline that `swift run tether check` meets on its own.
    static var relaxed: CheckTiming {
        var timing = CheckTiming()
        timing.interval = 150
        timing.timeout = 400
        timing.backoffBase = 100
        timing.backoffCap = 3_000
        timing.tolerance = 400
        timing.waitLimit = TestTime.scaled(.seconds(15))
        // The other tests' memory counts in this process too; `FloodScenariosTests` checks the real limit in a
        // process of the check's own.
        timing.residentGrowthLimit = 1 << 30
        return timing
    }

    /// The two flood scenarios keep both cores busy for seconds and measure against real-time windows: beside the
    /// parallel suite they starve it and are starved by it. `FloodScenariosTests` runs them alone, in a process of
    /// their own.
    static let floods = ["slow-consumer", "ping-flood"]

    @Test func theWholeMatrixPassesAndWritesBothReports() async throws {
        let directory = self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let captured = CapturedIO()
        let status = await CheckCommand.run(
            CheckOptions(outputDirectory: directory.path, skip: Self.floods), io: captured.io, timing: Self.relaxed)
        #expect(status == 0, "\(captured.output)")
        let names = CheckCatalog.names.filter { !Self.floods.contains($0) }
        #expect(names.count == CheckCatalog.names.count - 2)
        // Progress: one plain line per scenario (not a terminal), then the table; a skipped scenario is not run.
        for name in names {
            #expect(captured.outputLines.contains { $0.contains("] \(name) PASS") }, "\(name)")
        }
        #expect(!captured.output.contains("ping-flood") && !captured.output.contains("slow-consumer"))
        #expect(captured.output.contains("\(names.count)/\(names.count) scenarios passed"))

        let json = try Data(contentsOf: directory.appendingPathComponent("tether-report.json"))
        let report = try #require(JSONSerialization.jsonObject(with: json) as? [String: Any])
        #expect(report["passed"] as? Bool == true)
        let scenarios = try #require(report["scenarios"] as? [[String: Any]])
        #expect(scenarios.compactMap { $0["name"] as? String } == names)
        // `detail`: what a TLS failure or an invalid handshake failed on, in fixed words.
        let allowed: Set<String> = [
            "t", "gen", "event", "from", "to", "reason", "detail", "code", "rtt_ms", "deadline_ms", "attempt",
            "delay_ms", "bytes", "path", "ignored", "step", "timings",
        ]
        for scenario in scenarios {
            let timeline = try #require(scenario["timeline"] as? [[String: Any]])
            // A scenario that failed shows its checks and the client's course (time, event, generation, what a
            // stale record ignored): a failure seen once under load can be read from the log alone.
            let course = timeline.map { entry in
                ["t", "event", "gen", "reason", "ignored"].compactMap { entry[$0].map { "\($0)" } }
                    .joined(separator: " ")
            }
            #expect(scenario["passed"] as? Bool == true,
                    "\(scenario["name"] ?? "?"): \(scenario["checks"] ?? "") course: \(course.joined(separator: "; "))")
            #expect(!timeline.isEmpty)
            #expect(timeline.allSatisfy { Set($0.keys).isSubset(of: allowed) && $0["t"] is Int && $0["gen"] is Int })
        }
        let pongTimeout = try #require(scenarios.first { $0["name"] as? String == "pong-delay-past" })
        let closes = (pongTimeout["timeline"] as? [[String: Any]] ?? []).filter { $0["event"] as? String == "closed" }
        #expect(closes.first?["reason"] as? String == "pong_timeout")
        // Each attempt's open carries its timings in the report's timeline.
        let opens = (pongTimeout["timeline"] as? [[String: Any]] ?? []).filter { $0["event"] as? String == "opened" }
        #expect(!opens.isEmpty && opens.allSatisfy { ($0["timings"] as? [String: Any])?["tcp"] != nil })
        let badCertificate = try #require(scenarios.first { $0["name"] as? String == "tls-bad-certificate" })
        let tlsTimeline = badCertificate["timeline"] as? [[String: Any]] ?? []
        let tlsClose = tlsTimeline.first { $0["event"] as? String == "closed" }
        #expect(tlsClose?["reason"] as? String == "tls_failed")
        #expect(tlsClose?["detail"] as? String == "hostname mismatch")

        let html = try String(contentsOf: directory.appendingPathComponent("tether-report.html"), encoding: .utf8)
        #expect(html.components(separatedBy: "<svg").count - 1 == names.count + 1)  // + the legend
        #expect(!html.contains("http://") && !html.contains("https://") && !html.contains("<script"))
        #expect(!html.contains("src=") && !html.contains("url("))
    }

    @Test func onlyRunsOneScenarioAndJSONPrintsTheSummary() async throws {
        let directory = self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let captured = CapturedIO()
        let status = await TetherCommand.run(
            ["check", "--only", "handshake-401", "--json", "--out", directory.path], io: captured.io)
        #expect(status == 0, "\(captured.error)")
        let summary = try #require(
            JSONSerialization.jsonObject(with: Data(captured.output.utf8)) as? [String: Any])
        #expect(summary["passed"] as? Bool == true)
        let scenarios = try #require(summary["scenarios"] as? [[String: Any]])
        #expect(scenarios.count == 1 && scenarios[0]["name"] as? String == "handshake-401")
        #expect((scenarios[0]["evidence"] as? [String: String])?["code"] == "401")
        // Progress went to stderr, so stdout is only the summary.
        #expect(captured.error.contains("handshake-401 PASS"))
    }

    @Test func aScenarioThatCannotFinishFailsTheRunWithExitOne() async throws {
        let directory = self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var impatient = CheckTiming()
        // Zero: the first wait asks whether the reconnect already happened, and it cannot have. (1 ms was a race: the
        // wait's guard runs on the global pool, which a busy parallel suite delayed past the whole 254 ms scenario.)
        impatient.waitLimit = .zero
        let captured = CapturedIO()
        let status = await CheckCommand.run(
            CheckOptions(outputDirectory: directory.path, only: "pong-delay-past"), io: captured.io, timing: impatient)
        #expect(status == 1)
        #expect(captured.output.contains("pong-delay-past FAIL"))
        #expect(captured.output.contains("error: timed out waiting for"))
        #expect(captured.output.contains("0/1 scenarios passed"))
        let json = try Data(contentsOf: directory.appendingPathComponent("tether-report.json"))
        let report = try #require(JSONSerialization.jsonObject(with: json) as? [String: Any])
        #expect(report["passed"] as? Bool == false)
    }

    @Test func anUnwritableOutputDirectoryFailsVisibly() async throws {
        let file = self.temporaryDirectory()
        try Data("x".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let captured = CapturedIO()
        let status = await TetherCommand.run(["check", "--only", "handshake-401", "--out", file.path], io: captured.io)
        #expect(status == 1)
        #expect(captured.error.contains("cannot write the report"))
    }
}
