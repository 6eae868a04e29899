import Foundation
import Synchronization
import Tether
import TetherCore

/// `tether connect URL`: an interactive client. Lines on stdin are sent as text messages, received messages are
/// printed, and a status line (stderr) shows state, generation, last RTT, attempt and next retry.
public enum ConnectCommand {
    /// Why the command ends.
    enum Outcome: Sendable, Equatable {
        case countReached
        case durationElapsed
        case inputEnded
        case interrupted
        case failed(CloseReason?)
    }

    /// - Returns: 0 on a clean exit (count or duration reached, end of stdin, SIGINT/SIGTERM: the connection is
    ///   closed with 1000 first), 3 when the connection stopped for a non-retryable reason (state `.failed`).
    public static func run(_ options: ConnectOptions, io: CommandIO) async -> Int32 {
        var configuration = WebSocketClient<ContinuousClock>.Configuration(
            url: options.url,
            headers: options.headers.map { (name: $0.name, value: $0.value) },
            subprotocols: options.protocols,
            heartbeatInterval: .milliseconds(options.interval),
            heartbeatTimeout: .milliseconds(options.timeout),
            backoff: BackoffPolicy(base: options.backoffBase, factor: 2, cap: options.backoffCap),
            maximumMessageSize: options.maximumMessageSize,
            pathMonitoring: options.pathMonitor ? .platform : .none
        )
        configuration.recordsMessages = options.eventsJSONL  // the JSONL log shows each message's size and time
        let client: WebSocketClient<ContinuousClock>
        do {
            client = try WebSocketClient(configuration: configuration)
        } catch {
            io.writeError("tether connect: \(error)\n")
            return 2  // bad arguments: the parser checks each option, the client checks them again
        }
        let (outcomes, outcome) = AsyncStream.makeStream(of: Outcome.self, bufferingPolicy: .unbounded)
        let status = StatusLine(io: io, url: options.url.redactedForLogs)
        let gate = OpenGate()

        let events = Task {
            var received = 0
            for await event in client.events {
                switch event {
                case .record(let record):
                    if options.eventsJSONL { status.print(record.jsonLine + "\n") }
                    if record.kind == .retryScheduled { status.update(retryDelay: record.delay) }
                    if let line = Self.attemptFailure(record) { status.error(line) }
                    if record.kind == .stopped { return }  // only our own stop() records it
                case .message(let message):
                    if let count = options.count, received >= count { continue }
                    received += 1
                    if !options.eventsJSONL, !options.quiet { status.print(Self.body(of: message)) }
                    if let count = options.count, received >= count { outcome.yield(.countReached) }
                case .stateChanged(let state, _):
                    gate.update(isOpen: state.phase == .open)
                    status.update(state)
                    if state.phase == .failed { outcome.yield(.failed(state.failure)) }
                case .roundTrip(let milliseconds):
                    status.update(rtt: milliseconds)
                }
            }
        }
        let input = Task {
            for await line in io.inputLines() {
                // A line typed before the connection opened (or while it reconnects) waits for the open.
                while true {
                    guard await gate.waitUntilOpen() else { return }
                    do {
                        try await client.send(text: line)
                        break
                    } catch WebSocketSendError.notOpen {
                        continue  // closed in between: wait for the next open
                    } catch {
                        status.error("not sent (\(Self.describe(error))): \(line.utf8.count) bytes\n")
                        break
                    }
                }
            }
            outcome.yield(.inputEnded)
        }
        let timer = Task {
            guard let duration = options.duration else { return }
            do {
                try await Task.sleep(for: .milliseconds(duration))
                outcome.yield(.durationElapsed)
            } catch {
                return  // cancelled: another outcome came first
            }
        }

        let interrupt = Task {
            guard let waitForInterrupt = io.waitForInterrupt else { return }
            if await waitForInterrupt() != 0 { outcome.yield(.interrupted) }
        }

        await client.start()
        var first: Outcome = .inputEnded
        for await next in outcomes {
            first = next
            break
        }
        input.cancel()
        gate.close()
        timer.cancel()
        interrupt.cancel()
        await client.stop()
        await events.value
        status.finish()
        if case .failed(let reason) = first {
            status.error("stopped: \(reason?.name ?? "failed")\(Self.detail(of: reason)) (not retryable)\n")
            return 3
        }
        return 0
    }

    static func body(of message: WebSocketMessage) -> String {
        switch message {
        case .text(let text): text + "\n"
        case .binary(let data): "<binary \(data.count) bytes>\n"
        }
    }

    /// The stderr line for a connection attempt that failed and will be tried again, with why (for example
    /// `attempt failed: handshake_invalid (Sec-WebSocket-Accept does not match the key)`); nil for any other
    /// record. A failure that stops the session gets its `stopped:` line instead.
    static func attemptFailure(_ record: LogRecord) -> String? {
        guard record.kind == .closed, record.from == .connecting, record.to != .failed, let reason = record.reason,
            reason != .userStopped, reason != .enteredBackground
        else {
            return nil
        }
        return "attempt failed: \(reason.name)\(Self.detail(of: reason))\n"
    }

    static func detail(of reason: CloseReason?) -> String {
        switch reason {
        case .handshakeRejected(let status)?: " \(status)"
        case .peerClosed(let code?)?: " \(code)"
        case .protocolViolation(let code)?: " \(code)"
        case .connectFailed(let failure)?: " (\(failure))"
        case .handshakeInvalid(let detail)?: " (\(detail))"
        default: ""
        }
    }

    static func describe(_ error: any Error) -> String {
        switch error as? WebSocketSendError {
        case .notOpen?: "not open"
        case .messageTooLarge(let size, let limit)?: "\(size) bytes > limit \(limit)"
        case .connectionFailed?: "connection failed"
        case nil: "\(error)"
        }
    }
}

/// Lets the stdin reader wait until the connection is open, without polling.
final class OpenGate: Sendable {
    private struct State {
        var isOpen = false
        var closed = false
        var waiters: [CheckedContinuation<Bool, Never>] = []
    }

    private let state = Mutex(State())

    func update(isOpen: Bool) {
        let waiters = self.state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            state.isOpen = isOpen
            guard isOpen else { return [] }
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(returning: true) }
    }

    /// Ends every wait with `false`: the command is exiting.
    func close() {
        let waiters = self.state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            state.closed = true
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(returning: false) }
    }

    /// True once the connection is open; false when the command exits first.
    func waitUntilOpen() async -> Bool {
        await withCheckedContinuation { continuation in
            let now = self.state.withLock { state -> Bool? in
                if state.closed { return false }
                if state.isOpen { return true }
                state.waiters.append(continuation)
                return nil
            }
            if let now { continuation.resume(returning: now) }
        }
    }
}

/// The status line of `tether connect` on stderr: redrawn in place on a terminal, one line per change otherwise.
/// Output on stdout goes through `print` so that the status line never tears a message.
final class StatusLine: Sendable {
    private struct State {
        var line = ""
        var connection: ConnectionState?
        var phase: SessionPhase = .stopped
        var retryDelay: Int?
    }

    private let io: CommandIO
    private let url: String
    private let state = Mutex(State())

    init(io: CommandIO, url: String) {
        self.io = io
        self.url = url
    }

    func update(_ connection: ConnectionState) {
        self.state.withLock { state in
            if connection.phase != .waiting { state.retryDelay = nil }
            state.phase = connection.phase
            state.connection = connection
            state.line = self.line(for: connection)
            self.draw(state)
        }
    }

    /// A new round-trip time: redrawn in place on a terminal; otherwise shown with the next state change, so that
    /// a heartbeat does not print a line.
    func update(rtt: Int) {
        self.state.withLock { state in
            guard var connection = state.connection else { return }
            connection.lastRTT = rtt
            state.connection = connection
            state.line = self.line(for: connection)
            if self.io.errorIsTerminal { self.draw(state) }
        }
    }

    private func line(for connection: ConnectionState) -> String {
        var line = "\(self.url) \(connection.phase.name) gen=\(connection.generation)"
        line += " rtt=" + (connection.lastRTT.map { "\($0)ms" } ?? "-")
        line += " attempt=\(connection.attempts)"
        line += " path=\(connection.path.name)"
        return line
    }

    func update(retryDelay: Int?) {
        self.state.withLock { state in
            state.retryDelay = retryDelay
            self.draw(state)
        }
    }

    /// Writes `text` to stdout, clearing and redrawing the status line around it on a terminal.
    func print(_ text: String) {
        self.state.withLock { state in
            if self.io.errorIsTerminal, !state.line.isEmpty { self.io.writeError("\r\u{1B}[2K") }
            self.io.write(text)
            if self.io.errorIsTerminal { self.draw(state, redrawOnly: true) }
        }
    }

    func error(_ text: String) {
        self.state.withLock { state in
            if self.io.errorIsTerminal { self.io.writeError("\r\u{1B}[2K") }
            self.io.writeError("tether: " + text)
            if self.io.errorIsTerminal { self.draw(state, redrawOnly: true) }
        }
    }

    /// Ends the status line on a terminal.
    func finish() {
        if self.io.errorIsTerminal { self.io.writeError("\n") }
    }

    private func draw(_ state: State, redrawOnly: Bool = false) {
        guard !state.line.isEmpty else { return }
        var line = state.line
        if state.phase == .waiting, let delay = state.retryDelay { line += " next-retry=\(delay)ms" }
        if self.io.errorIsTerminal {
            self.io.writeError("\r\u{1B}[2K[\(line)]")
        } else if !redrawOnly {
            self.io.writeError("[\(line)]\n")
        }
    }
}
