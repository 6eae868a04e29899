import Synchronization
import Tether
import TetherCore

/// The status line of `tether connect` on stderr, and what is printed around it.
///
/// Not on a terminal: one line per change, in brackets. On a terminal it is the last line, redrawn in place (the
/// retry counted down every second), and everything else is printed above it: received messages (marked `< ` when
/// standard output is a terminal), errors, and with `interactive` the lines the user typed (marked `> `), whose
/// line being typed is drawn below the status line (`> ` and the text) and redrawn after each of them. Lines that
/// would wrap are cut to the terminal's width, so that the cursor always knows where the status line is.
///
/// Everything goes through the command's `OutputQueue`; each method first waits for room in it (the key-by-key
/// ones do not: a person types slowly, and a paste is drawn once per read), then queues its text as one unit, so
/// that the status line never tears a message printed on stdout.
final class StatusLine: Sendable {
    private struct State {
        /// The status without the countdown: the URL and the phase, then the rest (`line(for:)`).
        var line = ""
        var connection: ConnectionState?
        var phase: SessionPhase = .stopped
        /// When the session waits: the retry's time, counted down on a terminal.
        var retryAt: ContinuousClock.Instant?
        /// Redraws the countdown on a terminal while the session waits.
        var ticker: Task<Void, Never>?
        /// A make-before-break handover under way: its step and the new connection's generation.
        var handover: (step: LogRecord.HandoverStep, generation: Int)?
        /// The line being typed (`interactive`).
        var input = ""
        /// Rows of the status and input lines on the screen now (terminal only): what a redraw erases first.
        var rows = 0
        var finished = false
    }

    private let output: OutputQueue
    private let errorIsTerminal: Bool
    private let outputIsTerminal: Bool
    private let interactive: Bool
    private let url: String
    /// The terminal's width, asked at each draw (a window can be resized).
    private let columns: @Sendable () -> Int
    private let state = Mutex(State())

    /// - Parameters:
    ///   - errorIsTerminal: stderr is a terminal: redraw in place.
    ///   - outputIsTerminal: stdout is a terminal: received messages are marked `< `.
    ///   - interactive: the user types on the terminal (`TerminalInput`): the line being typed is drawn below.
    ///   - columns: the terminal's width.
    init(
        output: OutputQueue, errorIsTerminal: Bool, outputIsTerminal: Bool = false, interactive: Bool = false,
        url: String, columns: @escaping @Sendable () -> Int = { 80 }
    ) {
        self.output = output
        self.errorIsTerminal = errorIsTerminal
        self.outputIsTerminal = outputIsTerminal
        self.interactive = interactive && errorIsTerminal
        self.url = url
        self.columns = columns
    }

    func update(_ connection: ConnectionState) async {
        guard await self.output.waitForRoom() else { return }
        self.state.withLock { state in
            if connection.phase != .waiting {
                state.retryAt = nil
                state.ticker?.cancel()
                state.ticker = nil
            }
            state.phase = connection.phase
            state.connection = connection
            state.line = self.line(for: connection)
            self.output.append(self.redraw(&state, above: []))
        }
    }

    /// A new round-trip time: redrawn in place on a terminal; otherwise shown with the next state change, so that
    /// a heartbeat does not print a line.
    func update(rtt: Int) async {
        if self.errorIsTerminal, !(await self.output.waitForRoom()) { return }
        self.state.withLock { state in
            guard var connection = state.connection else { return }
            connection.lastRTT = rtt
            state.connection = connection
            state.line = self.line(for: connection)
            if self.errorIsTerminal { self.output.append(self.redraw(&state, above: [])) }
        }
    }

    func line(for connection: ConnectionState) -> String {
        var line = "\(self.url) \(connection.phase.name) gen=\(connection.generation)"
        // What the server chose among `--protocol`s, while open.
        if let subprotocol = connection.handshake?.subprotocol { line += " protocol=\(subprotocol)" }
        line += " rtt=" + (connection.lastRTT.map { "\($0)ms" } ?? "-")
        line += " attempt=\(connection.attempts)"
        line += " path=\(connection.path.name)"
        // A metered or Low Data path, so that whoever watches sees why an app may hold back large transfers.
        if connection.pathIsExpensive { line += "+expensive" }
        if connection.pathIsConstrained { line += "+constrained" }
        line += " net=\(Self.network(connection))"
        return line
    }

    /// The connectivity as the status line names it: a refusal of the credentials with its HTTP status when the
    /// session stopped on it (`auth_failure:401`), else `ConnectivityStatus.name`.
    static func network(_ connection: ConnectionState) -> String {
        switch (connection.connectivity, connection.failure) {
        case (.serverUnreachable(.authFailure), .handshakeRejected(let status)?),
            (.serverUnreachable(.authFailure), .proxyRejected(let status)?):
            "auth_failure:\(status)"
        default:
            connection.connectivity.name
        }
    }

    /// A make-before-break handover record, or a close that may end one: the line shows the overlap
    /// (`handover=opening:gen3`, then `handover=moved:gen3` while the old connection drains) until the old
    /// connection's close, or the handover's end.
    func update(handover record: LogRecord) async {
        let changed: Bool = self.state.withLock { state in
            switch record.event {
            case .handover(let step) where step == .opening || step == .moved:
                state.handover = (step, record.generation)
                return true
            case .handover(.abandoned), .handover(.oldEndedFirst):
                state.handover = nil
                return true
            case .closed:
                // The old connection's close, once the session moved: the overlap is over.
                guard let handover = state.handover, handover.step == .moved, record.generation < handover.generation
                else { return false }
                state.handover = nil
                return true
            default:
                return false
            }
        }
        guard changed, await self.output.waitForRoom() else { return }
        self.state.withLock { state in
            _ = self.output.append(self.redraw(&state, above: []))
        }
    }

    /// The session waits `retryDelay` ms before its next attempt: shown as `next-retry=`, counted down every second
    /// on a terminal.
    func update(retryDelay: Int?) async {
        guard await self.output.waitForRoom() else { return }
        self.state.withLock { state in
            state.ticker?.cancel()
            state.ticker = nil
            state.retryAt = retryDelay.map { ContinuousClock.now + .milliseconds($0) }
            self.output.append(self.redraw(&state, above: []))
            if self.errorIsTerminal, let retryAt = state.retryAt { state.ticker = self.countDown(to: retryAt) }
        }
    }

    /// Redraws the line at each whole second left until `retryAt`.
    private func countDown(to retryAt: ContinuousClock.Instant) -> Task<Void, Never> {
        Task { [weak self] in
            while true {
                let left = ContinuousClock.now.duration(to: retryAt)
                let milliseconds = Self.milliseconds(left)
                guard milliseconds > 1000 else { return }
                // The next whole second left: 4,300 ms left is shown as 5 s until 4,000 are.
                let next = retryAt - .milliseconds((milliseconds - 1) / 1000 * 1000)
                do {
                    try await Task.sleep(until: next, tolerance: .milliseconds(20), clock: .continuous)
                } catch {
                    return
                }
                guard let self, await self.output.waitForRoom() else { return }
                let current = self.state.withLock { state in
                    guard state.retryAt == retryAt, !state.finished else { return false }
                    self.output.append(self.redraw(&state, above: []))
                    return true
                }
                guard current else { return }
            }
        }
    }

    /// Writes `text` to stdout (marked `< ` on a terminal), redrawing the status line below it on a terminal.
    func print(_ text: String) async {
        guard await self.output.waitForRoom() else { return }
        self.state.withLock { state in
            let marked = self.outputIsTerminal ? "< " + text : text
            self.output.append(self.redraw(&state, above: [.init(stream: .output, text: marked)]))
        }
    }

    func error(_ text: String) async {
        guard await self.output.waitForRoom() else { return }
        self.errorNow(text)
    }

    /// Prints an error line without waiting for room (a line or two past the queue's limit): for what must be said
    /// at once, while a signal's deadline runs.
    func errorNow(_ text: String) {
        self.state.withLock { state in
            _ = self.output.append(self.redraw(&state, above: [.init(stream: .error, text: "tether: " + text)]))
        }
    }

    /// The line being typed changed (`interactive`): redrawn below the status line at once.
    func inputChanged(_ text: String) {
        guard self.interactive else { return }
        self.state.withLock { state in
            state.input = text
            guard !state.finished else { return }
            self.output.append(self.redraw(&state, above: []))
        }
    }

    /// The user submitted `line` (`interactive`): it stays on the screen above the status line, marked `> `.
    func inputSubmitted(_ line: String) {
        guard self.interactive else { return }
        self.state.withLock { state in
            state.input = ""
            guard !state.finished else { return }
            let shown = "> " + TerminalText.escaped(line) + "\n"
            self.output.append(self.redraw(&state, above: [.init(stream: .error, text: shown)]))
        }
    }

    /// Ends the status line on a terminal (the last write: it does not wait for room): the last status stays on the
    /// screen, the line being typed goes.
    func finish() {
        self.state.withLock { state in
            state.finished = true
            state.ticker?.cancel()
            state.ticker = nil
            guard self.errorIsTerminal, state.rows > 0 else { return }
            state.input = ""
            var chunks = [OutputQueue.Chunk(stream: .error, text: self.erase(rows: state.rows))]
            chunks.append(.init(stream: .error, text: self.cut("[" + self.statusText(state) + "]") + "\n"))
            state.rows = 0
            self.output.append(chunks)
        }
    }

    /// The chunks that print `above` (if any) and then show the status: on a terminal, the status and input rows
    /// are erased, `above` printed where they were, and both drawn again below it; otherwise `above`, then the
    /// status as a line of its own when there is nothing above (a change of state).
    private func redraw(_ state: inout State, above: [OutputQueue.Chunk]) -> [OutputQueue.Chunk] {
        guard self.errorIsTerminal else {
            if !above.isEmpty || state.line.isEmpty { return above }
            return [.init(stream: .error, text: "[" + self.statusText(state) + "]\n")]
        }
        var chunks: [OutputQueue.Chunk] = []
        if state.rows > 0 { chunks.append(.init(stream: .error, text: self.erase(rows: state.rows))) }
        chunks += above
        state.rows = 0
        guard !state.finished else { return chunks }
        var footer = ""
        if !state.line.isEmpty {
            footer = self.cut("[" + self.statusText(state) + "]")
            state.rows = 1
        }
        if self.interactive {
            if state.rows > 0 { footer += "\n" }
            footer += self.cut("> " + state.input, keepingEnd: true)
            state.rows += 1
        }
        if !footer.isEmpty { chunks.append(.init(stream: .error, text: footer)) }
        return chunks
    }

    /// Moves to the first of `rows` rows ending at the cursor's and clears them.
    private func erase(rows: Int) -> String {
        "\r\u{1B}[2K" + String(repeating: "\u{1B}[1A\u{1B}[2K", count: max(0, rows - 1))
    }

    /// The status line's text with the countdown, next to the phase (where a narrow terminal still shows it), and
    /// the handover.
    private func statusText(_ state: State) -> String {
        var line = state.line
        if state.phase == .waiting, let retryAt = state.retryAt, let phase = line.range(of: " waiting ") {
            let countdown = "next-retry=" + Self.countdown(ContinuousClock.now.duration(to: retryAt))
            line.insert(contentsOf: countdown + " ", at: phase.upperBound)
        }
        if let handover = state.handover { line += " handover=\(handover.step.rawValue):gen\(handover.generation)" }
        return line
    }

    /// `text` cut to the terminal's width less one column (the cursor's), from the end with `keepingEnd`.
    private func cut(_ text: String, keepingEnd: Bool = false) -> String {
        let width = max(8, self.columns() - 1)
        guard text.count > width else { return text }
        return keepingEnd ? "> …" + String(text.suffix(width - 3)) : String(text.prefix(width - 1)) + "…"
    }

    /// The time left before a retry: whole seconds, rounded up, from one second on (`5s`), milliseconds below.
    static func countdown(_ left: Duration) -> String {
        let milliseconds = max(0, self.milliseconds(left))
        return milliseconds < 1000 ? "\(milliseconds)ms" : "\((milliseconds + 999) / 1000)s"
    }

    /// Whole milliseconds, rounded up: a retry 999.9 ms away is shown as 1 s, not 999 ms.
    private static func milliseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        let perMillisecond: Int64 = 1_000_000_000_000_000
        return Int(seconds) * 1000 + Int((attoseconds + perMillisecond - 1) / perMillisecond)
    }
}
