import TetherCore

/// Draws one scenario's event records as an SVG timeline: the session phase as coloured bands over time,
/// generations, pings and pongs (with RTT), messages (as a density strip), the spans in which reading was held
/// (unread events above the inbound high watermark), closes with their reason and code, scheduled retries as arrows
/// spanning their delay, and path changes.
enum TimelineSVG {
    static let width = 1180
    static let left = 92
    static let right = 70
    static var plotWidth: Int { self.width - self.left - self.right }

    /// Lane positions (y of the lane's centre or top).
    private enum Lane {
        static let band = 34  // phase band top; 30 high
        static let generation = 80
        static let ping = 104
        static let pong = 126
        static let messages = 142  // strip top; 18 high
        static let held = 166  // bar top; 10 high
        static let closeLabels = 192  // two rows, 16 apart
        static let retry = 236  // two rows, 16 apart
        static let step = 280
        static let path = 304  // two rows, 13 apart
        static let axis = 334
        static let height = 360
    }

    static func phaseColour(_ phase: SessionPhase) -> String {
        switch phase {
        case .stopped: "#cbd5e0"
        case .connecting: "#f6c453"
        case .open: "#48bb78"
        case .waiting: "#63b3ed"
        case .offline: "#a0aec0"
        case .suspended: "#b794f4"
        case .failed: "#f56565"
        }
    }

    static let allPhases: [SessionPhase] = [.stopped, .connecting, .open, .waiting, .offline, .suspended, .failed]

    // MARK: Timeline

    static func render(_ records: [LogRecord], marks: [StepMark] = []) -> String {
        let lastTime = max(records.map(\.time).max() ?? 0, marks.map(\.time).max() ?? 0)
        let span = max(100, Int(Double(lastTime) * 1.06) + 10)
        func x(_ time: Int) -> Double {
            Double(self.left) + Double(min(max(time, 0), span)) / Double(span) * Double(self.plotWidth)
        }
        var svg = "<svg width=\"\(self.width)\" height=\"\(Lane.height)\" "
        svg += "viewBox=\"0 0 \(self.width) \(Lane.height)\" role=\"img\" aria-label=\"event timeline\">\n"
        svg += "<rect x=\"0\" y=\"0\" width=\"\(self.width)\" height=\"\(Lane.height)\" fill=\"#ffffff\"/>\n"
        // Lane labels.
        let labels: [(String, Int)] = [
            ("phase", Lane.band + 19), ("generation", Lane.generation + 4), ("ping", Lane.ping + 4),
            ("pong / RTT", Lane.pong + 4), ("messages", Lane.messages + 13), ("reading held", Lane.held + 9),
            ("close", Lane.closeLabels + 8),
            ("retry delay", Lane.retry + 8), ("check step", Lane.step + 4), ("path", Lane.path + 4),
        ]
        for (label, y) in labels {
            svg += "<text x=\"\(self.left - 8)\" y=\"\(y)\" font-size=\"11\" fill=\"#4a5568\" text-anchor=\"end\">"
            svg += "\(label)</text>\n"
        }
        svg += self.phaseBands(records, span: span, x: x)
        var labelEnds = LabelLanes()

        // Generations: a tick where each connection attempt starts.
        for record in records where record.kind == .connecting {
            let position = x(record.time)
            svg += "<line x1=\"\(f(position))\" y1=\"\(Lane.generation - 8)\" x2=\"\(f(position))\" "
            svg += "y2=\"\(Lane.generation + 6)\" stroke=\"#2d3748\" stroke-width=\"1.5\"/>\n"
            if labelEnds.fits("gen", position + 3, width: 26) {
                svg += self.text("g\(record.generation)", x: position + 3, y: Lane.generation + 4, size: 11,
                                 colour: "#2d3748")
            }
        }
        // Pings and pongs.
        for record in records where record.kind == .ping {
            let position = x(record.time)
            svg += "<path d=\"M\(f(position)) \(Lane.ping - 6) L\(f(position - 5)) \(Lane.ping + 4) "
            svg += "L\(f(position + 5)) \(Lane.ping + 4) Z\" fill=\"#3182ce\"/>\n"
        }
        for record in records where record.kind == .pong {
            let position = x(record.time)
            svg += "<circle cx=\"\(f(position))\" cy=\"\(Lane.pong)\" r=\"4.5\" fill=\"#2f855a\"/>\n"
            if let rtt = record.rtt, labelEnds.fits("rtt", position + 6, width: 42) {
                svg += self.text("\(rtt) ms", x: position + 6, y: Lane.pong + 4, size: 10, colour: "#2f855a")
            }
        }
        svg += self.messageStrip(records, span: span, x: x)
        svg += self.heldSpans(records, span: span, x: x)
        // Closes: a red line through the lanes and the reason.
        for record in records where record.kind == .closed {
            let position = x(record.time)
            svg += "<line x1=\"\(f(position))\" y1=\"\(Lane.band - 4)\" x2=\"\(f(position))\" "
            svg += "y2=\"\(Lane.closeLabels + 2)\" stroke=\"#c53030\" stroke-width=\"1.5\" "
            svg += "stroke-dasharray=\"3 2\"/>\n"
            var label = record.reason?.name ?? "closed"
            if let code = record.code { label += " \(code)" }
            label += " → \(record.to.name)"
            let width = Double(label.count) * 6.8 + 8
            let row = labelEnds.row(["close0", "close1"], position + 3, width: width)
            // A label that would leave the picture is set to the left of its line.
            let leftward = position + 3 + width > Double(self.width)
            svg += self.text(label, x: leftward ? position - 3 : position + 3,
                             y: Double(Lane.closeLabels + 8 + row * 16), size: 11, colour: "#c53030", bold: true,
                             anchor: leftward ? "end" : "start")
        }
        // Retries: an arrow across the delay.
        for record in records where record.kind == .retryScheduled {
            let delay = record.delay ?? 0
            let start = x(record.time)
            let end = x(record.time + delay)
            let clipped = record.time + delay > span
            var label = "retry \(delay) ms"
            if let attempt = record.attempt { label += " (attempt \(attempt))" }
            if clipped { label += " →" }
            let width = Double(label.count) * 6.2 + 8
            let row = labelEnds.row(["retry0", "retry1"], start, width: max(width, end - start))
            let y = Double(Lane.retry + row * 16)
            svg += "<line x1=\"\(f(start))\" y1=\"\(f(y))\" x2=\"\(f(end))\" y2=\"\(f(y))\" stroke=\"#2b6cb0\" "
            svg += "stroke-width=\"2\"/>\n"
            svg += "<line x1=\"\(f(start))\" y1=\"\(f(y - 5))\" x2=\"\(f(start))\" y2=\"\(f(y + 5))\" "
            svg += "stroke=\"#2b6cb0\"/>\n"
            if !clipped {
                svg += "<path d=\"M\(f(end)) \(f(y)) L\(f(end - 6)) \(f(y - 4)) L\(f(end - 6)) \(f(y + 4)) Z\" "
                svg += "fill=\"#2b6cb0\"/>\n"
            }
            svg += self.text(label, x: start + 3, y: y - 4, size: 10, colour: "#2b6cb0")
        }
        // The scenario's own steps (a stop, injected callbacks, a scripted path change).
        for mark in marks {
            let position = x(mark.time)
            let y = Double(Lane.step)
            svg += "<rect x=\"\(f(position - 4))\" y=\"\(f(y - 4))\" width=\"8\" height=\"8\" fill=\"#dd6b20\"/>\n"
            let width = Double(mark.label.count) * 6.4 + 6
            // A label that would leave the picture is set to the left of its mark.
            let leftward = position + 8 + width > Double(self.width)
            svg += self.text(mark.label, x: leftward ? position - 8 : position + 8, y: y + 4, size: 11,
                             colour: "#9c4221", anchor: leftward ? "end" : "start")
        }
        // Path changes.
        for record in records where record.kind == .path {
            let position = x(record.time)
            let y = Double(Lane.path)
            svg += "<path d=\"M\(f(position)) \(f(y - 6)) L\(f(position + 6)) \(f(y)) L\(f(position)) \(f(y + 6)) "
            svg += "L\(f(position - 6)) \(f(y)) Z\" fill=\"#805ad5\"/>\n"
            let label = (record.path?.name ?? "path") + " (\(record.from.name) → \(record.to.name))"
            let row = labelEnds.row(["path0", "path1"], position + 9, width: Double(label.count) * 6.2 + 6)
            svg += self.text(label, x: position + 9, y: y + 4 + Double(row * 13), size: 11, colour: "#553c9a")
        }
        svg += self.axis(span: span, x: x)
        svg += "</svg>\n"
        return svg
    }

    private static func phaseBands(_ records: [LogRecord], span: Int, x: (Int) -> Double) -> String {
        // The phase holds from each record's time until the next change; it starts stopped at 0.
        var segments: [(start: Int, end: Int, phase: SessionPhase)] = []
        var phase = SessionPhase.stopped
        var since = 0
        for record in records where record.to != phase {
            if record.time > since || phase != .stopped { segments.append((since, record.time, phase)) }
            phase = record.to
            since = record.time
        }
        let lastTime = records.last?.time ?? 0
        segments.append((since, max(lastTime, since), phase))
        var svg = ""
        var previousEnd = Double(self.left)
        for (index, segment) in segments.enumerated() {
            let start = max(x(segment.start), previousEnd)
            // The last phase holds to the end of the plot: it is the state the recording ended in.
            // Phases that lasted under a millisecond still show as a 4 px sliver.
            let end = index == segments.count - 1 ? Double(self.left + self.plotWidth) : max(x(segment.end), start + 4)
            previousEnd = end
            svg += "<rect x=\"\(f(start))\" y=\"\(Lane.band)\" width=\"\(f(end - start))\" height=\"30\" "
            svg += "fill=\"\(self.phaseColour(segment.phase))\"><title>\(segment.phase.name) "
            svg += "\(segment.start)–\(segment.end) ms</title></rect>\n"
            let name = segment.phase.name
            if end - start > Double(name.count) * 7 + 8 {
                svg += self.text(name, x: start + 4, y: Double(Lane.band + 19), size: 12, colour: "#1a202c")
            }
        }
        svg += "<rect x=\"\(self.left)\" y=\"\(Lane.band)\" width=\"\(self.plotWidth)\" height=\"30\" fill=\"none\" "
        svg += "stroke=\"#a0aec0\" stroke-width=\"0.5\"/>\n"
        return svg
    }

    private static func messageStrip(_ records: [LogRecord], span: Int, x: (Int) -> Double) -> String {
        let messages = records.filter { $0.kind == .message }
        guard !messages.isEmpty else { return "" }
        // One bar per 4 px bin; its height shows how many messages arrived in that bin.
        let bins = self.plotWidth / 4
        var counts = [Int](repeating: 0, count: bins)
        for message in messages {
            let bin = min(bins - 1, max(0, Int((x(message.time) - Double(self.left)) / 4)))
            counts[bin] += 1
        }
        let peak = counts.max() ?? 1
        var svg = ""
        for (bin, count) in counts.enumerated() where count > 0 {
            let height = max(2, 18 * Double(count) / Double(peak))
            svg += "<rect x=\"\(self.left + bin * 4)\" y=\"\(f(Double(Lane.messages + 18) - height))\" width=\"3\" "
            svg += "height=\"\(f(height))\" fill=\"#718096\"/>\n"
        }
        let total = messages.count
        let bytes = messages.compactMap(\.bytes).reduce(0, +)
        let lastX = x(messages.last?.time ?? 0)
        svg += self.text("\(total) messages, \(bytes) bytes", x: min(lastX + 8, Double(self.width - 200)),
                         y: Double(Lane.messages + 14), size: 11, colour: "#4a5568")
        return svg
    }

    /// A bar from each `reading_held` record to the `reading_resumed` after it (or to the end of the recording).
    private static func heldSpans(_ records: [LogRecord], span: Int, x: (Int) -> Double) -> String {
        var spans: [(start: Int, end: Int?)] = []
        for record in records {
            switch record.kind {
            case .readingHeld where spans.last.map({ $0.end != nil }) ?? true:
                spans.append((record.time, nil))
            case .readingResumed where spans.last?.end == nil && !spans.isEmpty:
                spans[spans.count - 1].end = record.time
            default:
                break
            }
        }
        guard !spans.isEmpty else { return "" }
        let lastTime = records.last?.time ?? 0
        var svg = ""
        for held in spans {
            let start = x(held.start)
            // A hold of under a millisecond still shows as a 2 px sliver.
            let end = max(x(held.end ?? max(lastTime, held.start)), start + 2)
            svg += "<rect x=\"\(f(start))\" y=\"\(Lane.held)\" width=\"\(f(end - start))\" height=\"10\" "
            svg += "fill=\"#d69e2e\"><title>reading held \(held.start)–\(held.end.map(String.init) ?? "end") ms"
            svg += "</title></rect>\n"
        }
        let total = spans.reduce(0) { $0 + (($1.end ?? lastTime) - $1.start) }
        let lastX = x(spans.last?.end ?? lastTime)
        svg += self.text("\(spans.count) holds, \(total) ms", x: min(lastX + 8, Double(self.width - 140)),
                         y: Double(Lane.held + 9), size: 11, colour: "#975a16")
        return svg
    }

    private static func axis(span: Int, x: (Int) -> Double) -> String {
        let steps = [1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 5000, 10_000, 20_000, 60_000]
        let step = steps.first { span / $0 <= 12 } ?? 60_000
        var svg = "<line x1=\"\(self.left)\" y1=\"\(Lane.axis)\" x2=\"\(self.left + self.plotWidth)\" "
        svg += "y2=\"\(Lane.axis)\" stroke=\"#4a5568\"/>\n"
        var tick = 0
        while tick <= span {
            let position = x(tick)
            svg += "<line x1=\"\(f(position))\" y1=\"\(Lane.axis)\" x2=\"\(f(position))\" y2=\"\(Lane.axis + 5)\" "
            svg += "stroke=\"#4a5568\"/>\n"
            svg += "<line x1=\"\(f(position))\" y1=\"\(Lane.band)\" x2=\"\(f(position))\" y2=\"\(Lane.axis)\" "
            svg += "stroke=\"#edf2f7\" stroke-width=\"1\"/>\n"
            svg += self.text("\(tick) ms", x: position, y: Double(Lane.axis + 17), size: 10, colour: "#4a5568",
                             anchor: "middle")
            tick += step
        }
        return svg
    }

    // MARK: Legend

    static func legend() -> String {
        var svg = "<svg width=\"\(self.width)\" height=\"64\" "
        svg += "viewBox=\"0 0 \(self.width) 64\" role=\"img\" aria-label=\"legend\">\n"
        svg += self.text("phases:", x: 4, y: 18, size: 12, colour: "#1a202c", bold: true)
        var position = 70.0
        for phase in self.allPhases {
            svg += "<rect x=\"\(f(position))\" y=\"6\" width=\"18\" height=\"16\" "
            svg += "fill=\"\(self.phaseColour(phase))\"/>\n"
            svg += self.text(phase.name, x: position + 23, y: 18, size: 12, colour: "#1a202c")
            position += 36 + Double(phase.name.count) * 7.2
        }
        svg += "<rect x=\"\(f(position + 20))\" y=\"9\" width=\"24\" height=\"10\" fill=\"#d69e2e\"/>"
        svg += self.text("reading held (unread events above the inbound high watermark)", x: position + 50, y: 18,
                         size: 12, colour: "#975a16")
        svg += self.text("marks:", x: 4, y: 50, size: 12, colour: "#1a202c", bold: true)
        svg += "<path d=\"M76 38 L71 48 L81 48 Z\" fill=\"#3182ce\"/>"
        svg += self.text("ping sent", x: 88, y: 50, size: 12, colour: "#1a202c")
        svg += "<circle cx=\"170\" cy=\"45\" r=\"4.5\" fill=\"#2f855a\"/>"
        svg += self.text("pong (RTT)", x: 180, y: 50, size: 12, colour: "#1a202c")
        svg += "<rect x=\"262\" y=\"38\" width=\"3\" height=\"12\" fill=\"#718096\"/><rect x=\"267\" y=\"42\" "
        svg += "width=\"3\" height=\"8\" fill=\"#718096\"/>"
        svg += self.text("messages per 4 px", x: 276, y: 50, size: 12, colour: "#1a202c")
        svg += "<line x1=\"400\" y1=\"36\" x2=\"400\" y2=\"54\" stroke=\"#c53030\" stroke-width=\"1.5\" "
        svg += "stroke-dasharray=\"3 2\"/>"
        svg += self.text("close (reason code → next phase)", x: 406, y: 50, size: 12, colour: "#c53030")
        svg += "<line x1=\"630\" y1=\"45\" x2=\"680\" y2=\"45\" stroke=\"#2b6cb0\" stroke-width=\"2\"/>"
        svg += "<path d=\"M680 45 L674 41 L674 49 Z\" fill=\"#2b6cb0\"/>"
        svg += self.text("retry delay", x: 687, y: 50, size: 12, colour: "#2b6cb0")
        svg += "<path d=\"M776 39 L782 45 L776 51 L770 45 Z\" fill=\"#805ad5\"/>"
        svg += self.text("path change", x: 788, y: 50, size: 12, colour: "#553c9a")
        svg += "<line x1=\"880\" y1=\"38\" x2=\"880\" y2=\"52\" stroke=\"#2d3748\" stroke-width=\"1.5\"/>"
        svg += self.text("connection attempt (generation)", x: 886, y: 50, size: 12, colour: "#2d3748")
        svg += "<rect x=\"1090\" y=\"41\" width=\"8\" height=\"8\" fill=\"#dd6b20\"/>"
        svg += self.text("check step", x: 1103, y: 50, size: 12, colour: "#9c4221")
        svg += "</svg>\n"
        return svg
    }

    // MARK: Helpers

    private static func text(
        _ content: String, x: Double, y: Double, size: Int, colour: String, bold: Bool = false,
        anchor: String = "start"
    ) -> String {
        var svg = "<text x=\"\(f(x))\" y=\"\(f(y))\" font-size=\"\(size)\" fill=\"\(colour)\""
        if bold { svg += " font-weight=\"bold\"" }
        if anchor != "start" { svg += " text-anchor=\"\(anchor)\"" }
        return svg + ">\(escape(content))</text>\n"
    }

    private static func text(
        _ content: String, x: Double, y: Int, size: Int, colour: String, bold: Bool = false
    ) -> String {
        self.text(content, x: x, y: Double(y), size: size, colour: colour, bold: bold)
    }

    /// Where each label lane's last label ends, so that labels never overlap.
    private struct LabelLanes {
        private var ends: [String: Double] = [:]

        mutating func fits(_ lane: String, _ x: Double, width: Double) -> Bool {
            guard x >= (self.ends[lane] ?? -.infinity) else { return false }
            self.ends[lane] = x + width
            return true
        }

        /// The first of `lanes` with room (0, 1, ...), or the one that frees up first.
        mutating func row(_ lanes: [String], _ x: Double, width: Double) -> Int {
            for (index, lane) in lanes.enumerated() where self.fits(lane, x, width: width) {
                return index
            }
            let index = lanes.indices.min { (self.ends[lanes[$0]] ?? 0) < (self.ends[lanes[$1]] ?? 0) } ?? 0
            self.ends[lanes[index]] = x + width
            return index
        }
    }
}

/// A coordinate with one decimal.
private func f(_ value: Double) -> String {
    let tenths = (value * 10).rounded()
    return tenths.truncatingRemainder(dividingBy: 10) == 0 ? String(Int(tenths / 10)) : String(tenths / 10)
}

private func f(_ value: Int) -> String { String(value) }
