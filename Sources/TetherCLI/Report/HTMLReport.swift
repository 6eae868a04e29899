import TetherCore

/// `tether-report.html`: a self-contained page (inline CSS and SVG, no scripts, no network fetches) with the
/// legend, then per scenario its result, checks, evidence and an SVG timeline of its event records.
package enum HTMLReport {
    package static func render(_ report: CheckReport) -> String {
        let passed = report.results.filter(\.passed).count
        var html = """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8">
            <title>tether check report</title>
            <style>\(self.css)</style>
            </head><body>
            <h1>tether check <span class="badge \(report.passed ? "pass" : "fail")">\
            \(passed)/\(report.results.count) passed</span></h1>
            <p class="meta">heartbeat interval \(report.timing.interval) ms, timeout \(report.timing.timeout) ms;
            backoff base \(report.timing.backoffBase) ms ×2 (+0–50 % jitter), cap \(report.timing.backoffCap) ms;
            timing tolerance \(report.timing.tolerance) ms. Times are milliseconds since the scenario's client
            was created (monotonic clock).</p>
            \(TimelineSVG.legend())
            <table class="summary"><tr><th>scenario</th><th>result</th><th>time</th><th>evidence</th></tr>

            """
        for result in report.results {
            html += "<tr><td><a href=\"#\(escape(result.name))\">\(escape(result.name))</a></td>"
            html += "<td class=\"\(result.passed ? "pass" : "fail")\">\(result.passed ? "pass" : "FAIL")</td>"
            html += "<td>\(result.durationMilliseconds) ms</td><td>\(escape(result.evidenceLine))</td></tr>\n"
        }
        html += "</table>\n"
        for result in report.results {
            html += self.section(result)
        }
        html += "</body></html>\n"
        return html
    }

    private static func section(_ result: ScenarioResult) -> String {
        var html = "<section id=\"\(escape(result.name))\">\n"
        let verdict = result.passed ? "pass" : "fail"
        html += "<h2><span class=\"badge \(verdict)\">\(result.passed ? "pass" : "FAIL")</span> "
        html += "\(escape(result.name)) <small>\(escape(result.title))</small></h2>\n"
        html += "<p class=\"meta\">server: \(escape(result.server.isEmpty ? "none" : result.server)) · "
        html += "\(result.durationMilliseconds) ms · \(result.records.count) event records</p>\n"
        if let error = result.error {
            html += "<p class=\"error\">error: \(escape(error))</p>\n"
        }
        if !result.evidence.isEmpty {
            html += "<p class=\"evidence\">"
            html += result.evidence.map { "<span><b>\(escape($0.key))</b> \(escape($0.value))</span>" }.joined()
            html += "</p>\n"
        }
        html += TimelineSVG.render(result.records, marks: result.marks)
        html += "<ul class=\"checks\">\n"
        for check in result.checks {
            html += "<li class=\"\(check.passed ? "pass" : "fail")\">\(check.passed ? "✓" : "✗") "
            html += "\(escape(check.name))<span class=\"detail\">\(escape(check.detail))</span></li>\n"
        }
        html += "</ul>\n</section>\n"
        return html
    }

    private static let css = """
        body{font:15px/1.45 -apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;margin:24px 32px;color:#1d2330;\
        background:#fafbfc}
        h1{font-size:26px;margin:0 0 6px}h2{font-size:18px;margin:0 0 4px}h2 small{font-weight:normal;color:#4a5568}
        .meta{color:#4a5568;font-size:13px;margin:4px 0 10px;max-width:1150px}
        .badge{display:inline-block;padding:1px 9px;border-radius:10px;font-size:13px;color:#fff;vertical-align:middle}
        .badge.pass{background:#2f855a}.badge.fail{background:#c53030}
        td.pass{color:#2f855a;font-weight:bold}td.fail{color:#c53030;font-weight:bold}
        table.summary{border-collapse:collapse;margin:14px 0 24px;font-size:13px}
        table.summary td,table.summary th{border-bottom:1px solid #e2e8f0;padding:4px 12px;text-align:left}
        section{background:#fff;border:1px solid #e2e8f0;border-radius:8px;padding:14px 18px;margin:0 0 18px;\
        max-width:1220px}
        .evidence span{display:inline-block;background:#edf2f7;border-radius:4px;padding:1px 8px;margin:0 6px 4px 0;\
        font-size:13px}
        .checks{margin:6px 0 0;padding-left:0;list-style:none;font-size:13px}
        .checks li{margin:2px 0}.checks li.pass{color:#276749}.checks li.fail{color:#c53030;font-weight:bold}
        .detail{color:#4a5568;margin-left:10px;font-weight:normal}
        .error{color:#c53030;font-weight:bold}
        svg{display:block;margin:6px 0}
        svg text{font-family:"DejaVu Sans",Arial,sans-serif}
        """
}

/// Escapes text for HTML and SVG content and attributes.
func escape(_ text: String) -> String {
    var output = ""
    for character in text {
        switch character {
        case "&": output += "&amp;"
        case "<": output += "&lt;"
        case ">": output += "&gt;"
        case "\"": output += "&quot;"
        case "'": output += "&#39;"
        default: output.append(character)
        }
    }
    return output
}
