import Foundation
import TetherCore

/// `tether check`: runs the acceptance matrix against the embedded test server, prints progress and a table
/// (or a JSON summary), writes `tether-report.json` and `tether-report.html`, and exits 1 if a scenario failed.
package enum CheckCommand {
    /// - Parameters:
    ///   - timing: the heartbeat, backoff and tolerance values the scenarios use (default: tens of ms).
    /// - Returns: the exit status: 0 all passed, 1 a scenario failed or the report could not be written.
    package static func run(
        _ options: CheckOptions, io: CommandIO, timing: CheckTiming = CheckTiming()
    ) async -> Int32 {
        let entries = CheckCatalog.entries.filter {
            (options.only == nil || $0.name == options.only) && !options.skip.contains($0.name)
        }
        // With --json, stdout carries only the summary; progress goes to stderr.
        let progress = Progress(
            write: options.json ? io.writeError : io.write,
            isTerminal: options.json ? io.errorIsTerminal : io.outputIsTerminal,
            total: entries.count)
        var results: [ScenarioResult] = []
        for (index, entry) in entries.enumerated() {
            let ticker = progress.started(entry.name, index: index)
            let result = await self.runScenario(entry, timing: timing)
            await progress.finished(result, index: index, ticker: ticker)
            results.append(result)
        }
        let report = CheckReport(results: results, timing: timing)
        let directory = URL(fileURLWithPath: options.outputDirectory, isDirectory: true)
        let jsonURL = directory.appendingPathComponent("tether-report.json")
        let htmlURL = directory.appendingPathComponent("tether-report.html")
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try Data(report.json.serialized(pretty: true).utf8).write(to: jsonURL)
            try Data(HTMLReport.render(report).utf8).write(to: htmlURL)
        } catch {
            let reason = error.localizedDescription
            io.writeError("tether check: cannot write the report to \(directory.path): \(reason)\n")
            return 1
        }
        if options.json {
            io.write(report.summary(jsonPath: jsonURL.path, htmlPath: htmlURL.path).serialized(pretty: true) + "\n")
        } else {
            io.write(ResultTable.render(results))
            io.write("report: \(jsonURL.path)\n        \(htmlURL.path)\n")
        }
        return report.passed ? 0 : 1
    }

    #if os(Linux)
    static func runScenario(_ entry: CheckCatalog.Entry, timing: CheckTiming) async -> ScenarioResult {
        let clock = ContinuousClock()
        let start = clock.now
        let run = ScenarioRun(timing: timing)
        var failure: String?
        do {
            try await entry.body(run)
        } catch {
            failure = error.description
        }
        await run.cleanUp()
        return ScenarioResult(
            name: entry.name,
            title: entry.title,
            server: run.serverDescription,
            checks: run.checks,
            evidence: run.evidence,
            error: failure,
            records: run.recorder?.snapshot.records ?? [],
            marks: run.marks,
            durationMilliseconds: start.duration(to: clock.now).milliseconds
        )
    }
    #endif
}
