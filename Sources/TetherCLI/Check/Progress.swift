import Foundation

/// Progress of `tether check`: on a terminal a spinner redrawn in place while a scenario runs, then its
/// result line; otherwise one plain line per finished scenario.
struct Progress: Sendable {
    let write: @Sendable (String) -> Void
    let isTerminal: Bool
    let total: Int

    private static let frames = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]

    private func counter(_ index: Int) -> String {
        let width = String(self.total).count
        let number = String(index + 1)
        return "[" + String(repeating: " ", count: width - number.count) + number + "/\(self.total)]"
    }

    /// Shows that `name` started; on a terminal returns the task animating the spinner.
    func started(_ name: String, index: Int) -> Task<Void, Never>? {
        guard self.isTerminal else { return nil }
        let line = "\(self.counter(index)) \(name)"
        let write = self.write
        return Task {
            var frame = 0
            while !Task.isCancelled {
                write("\r\u{1B}[2K\(Self.frames[frame % Self.frames.count]) \(line)")
                frame += 1
                try? await Task.sleep(for: .milliseconds(80))  // animation only; nothing waits on it
            }
        }
    }

    /// Replaces the spinner (if any) with the scenario's result line.
    func finished(_ result: ScenarioResult, index: Int, ticker: Task<Void, Never>?) async {
        if let ticker {
            ticker.cancel()
            await ticker.value
        }
        let mark = result.passed ? "PASS" : "FAIL"
        let line = "\(self.counter(index)) \(result.name) \(mark) (\(result.durationMilliseconds) ms)"
        if self.isTerminal {
            let symbol = result.passed ? "\u{1B}[32m✓\u{1B}[0m" : "\u{1B}[31m✗\u{1B}[0m"
            self.write("\r\u{1B}[2K\(symbol) \(line)\n")
        } else {
            self.write(line + "\n")
        }
    }
}

/// The table printed after the run: scenario, result, time and evidence; the failed checks under a failure.
enum ResultTable {
    static func render(_ results: [ScenarioResult]) -> String {
        let nameWidth = max(8, results.map(\.name.count).max() ?? 0)
        func pad(_ text: String, _ width: Int) -> String {
            text + String(repeating: " ", count: max(0, width - text.count))
        }
        var output = "\n" + pad("scenario", nameWidth) + "  result  time     evidence\n"
        output += String(repeating: "-", count: nameWidth) + "  ------  -------  --------\n"
        for result in results {
            let time = pad("\(result.durationMilliseconds) ms", 7)
            output += pad(result.name, nameWidth) + "  " + pad(result.passed ? "pass" : "FAIL", 6) + "  " + time
                + "  " + result.evidenceLine + "\n"
            if let error = result.error {
                output += String(repeating: " ", count: nameWidth + 2) + "error: \(error)\n"
            }
            for check in result.checks where !check.passed {
                output += String(repeating: " ", count: nameWidth + 2) + "failed: \(check.name) — \(check.detail)\n"
            }
        }
        let passed = results.filter(\.passed).count
        output += "\n\(passed)/\(results.count) scenarios passed\n"
        return output
    }
}
