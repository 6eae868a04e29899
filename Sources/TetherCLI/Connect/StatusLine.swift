import Synchronization
import Tether
import TetherCore

/// The status line of `tether connect` on stderr: redrawn in place on a terminal, one line per change otherwise.
/// Everything goes through the command's `OutputQueue`; each method first waits for room in it, then queues its
/// text as one unit, so that the status line never tears a message printed on stdout.
final class StatusLine: Sendable {
    private struct State {
        var line = ""
        var connection: ConnectionState?
        var phase: SessionPhase = .stopped
        var retryDelay: Int?
        /// A make-before-break handover under way: its step and the new connection's generation.
        var handover: (step: LogRecord.HandoverStep, generation: Int)?
    }

    private let output: OutputQueue
    private let errorIsTerminal: Bool
    private let url: String
    private let state = Mutex(State())

    init(output: OutputQueue, errorIsTerminal: Bool, url: String) {
        self.output = output
        self.errorIsTerminal = errorIsTerminal
        self.url = url
    }

    func update(_ connection: ConnectionState) async {
        guard await self.output.waitForRoom() else { return }
        self.state.withLock { state in
            if connection.phase != .waiting { state.retryDelay = nil }
            state.phase = connection.phase
            state.connection = connection
            state.line = self.line(for: connection)
            self.output.append(self.draw(state))
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
            if self.errorIsTerminal { self.output.append(self.draw(state)) }
        }
    }

    func line(for connection: ConnectionState) -> String {
        var line = "\(self.url) \(connection.phase.name) gen=\(connection.generation)"
        line += " rtt=" + (connection.lastRTT.map { "\($0)ms" } ?? "-")
        line += " attempt=\(connection.attempts)"
        line += " path=\(connection.path.name)"
        // A metered or Low Data path, so that whoever watches sees why an app may hold back large transfers.
        if connection.pathIsExpensive { line += "+expensive" }
        if connection.pathIsConstrained { line += "+constrained" }
        line += " net=\(connection.connectivity.name)"
        return line
    }

    /// A record of a make-before-break handover, or a close that may end one: the line shows the overlap
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
            _ = self.output.append(self.draw(state))
        }
    }

    func update(retryDelay: Int?) async {
        guard await self.output.waitForRoom() else { return }
        self.state.withLock { state in
            state.retryDelay = retryDelay
            self.output.append(self.draw(state))
        }
    }

    /// Writes `text` to stdout, clearing and redrawing the status line around it on a terminal.
    func print(_ text: String) async {
        guard await self.output.waitForRoom() else { return }
        self.state.withLock { state in
            var chunks: [OutputQueue.Chunk] = []
            if self.errorIsTerminal, !state.line.isEmpty { chunks.append(.init(stream: .error, text: "\r\u{1B}[2K")) }
            chunks.append(.init(stream: .output, text: text))
            if self.errorIsTerminal { chunks += self.draw(state, redrawOnly: true) }
            self.output.append(chunks)
        }
    }

    func error(_ text: String) async {
        guard await self.output.waitForRoom() else { return }
        self.state.withLock { state in
            var chunks: [OutputQueue.Chunk] = []
            if self.errorIsTerminal { chunks.append(.init(stream: .error, text: "\r\u{1B}[2K")) }
            chunks.append(.init(stream: .error, text: "tether: " + text))
            if self.errorIsTerminal { chunks += self.draw(state, redrawOnly: true) }
            self.output.append(chunks)
        }
    }

    /// Ends the status line on a terminal (the last write: it does not wait for room).
    func finish() {
        if self.errorIsTerminal { self.output.append([.init(stream: .error, text: "\n")]) }
    }

    private func draw(_ state: State, redrawOnly: Bool = false) -> [OutputQueue.Chunk] {
        guard !state.line.isEmpty else { return [] }
        var line = state.line
        if state.phase == .waiting, let delay = state.retryDelay { line += " next-retry=\(delay)ms" }
        if let handover = state.handover { line += " handover=\(handover.step.rawValue):gen\(handover.generation)" }
        if self.errorIsTerminal {
            return [.init(stream: .error, text: "\r\u{1B}[2K[\(line)]")]
        } else if !redrawOnly {
            return [.init(stream: .error, text: "[\(line)]\n")]
        }
        return []
    }
}
