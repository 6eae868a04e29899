import Foundation
import Tether
import TetherCore

/// `tether connect URL`: an interactive client. Lines on stdin are sent as text messages, received messages are
/// printed, and a status line (stderr) shows state, generation, last RTT, attempt and next retry.
package enum ConnectCommand {
    /// What ends the command. The exit status does not depend on which came first: it is 3 when the session had
    /// failed by then, 0 otherwise.
    enum Outcome: Sendable, Equatable {
        case countReached
        case durationElapsed
        /// Standard input ended, every line was sent, and no connection attempt is in progress.
        case inputEnded
        case interrupted
        case failed
    }

    /// - Returns: 0 on a clean exit (count or duration reached, end of stdin, SIGINT/SIGTERM: the connection is
    ///   closed with 1000 first), 3 when the connection stopped for a non-retryable reason (state `.failed`).
    package static func run(_ options: ConnectOptions, io: CommandIO) async -> Int32 {
        var configuration = WebSocketClient.Configuration(
            url: options.url,
            headers: options.headers.map { (name: $0.name, value: $0.value) },
            subprotocols: options.protocols,
            heartbeatInterval: .milliseconds(options.interval),
            heartbeatTimeout: .milliseconds(options.timeout),
            connectTimeout: .milliseconds(options.connectTimeout),
            backoff: BackoffPolicy(base: options.backoffBase, factor: 2, cap: options.backoffCap),
            maximumMessageSize: options.maximumMessageSize,
            pathMonitoring: options.pathMonitor ? .platform : .none
        )
        configuration.recordsMessages = options.eventsJSONL  // the JSONL log shows each message's size and time
        configuration.tls = TLSOptions(
            additionalTrustRoots: options.caFiles.map { .pemFile($0) }, pins: options.pins,
            insecureSkipVerification: options.insecure)
        if let certificate = options.clientCertificate, let key = options.clientKey {
            var passphrase: String?
            if let variable = options.keyPassphraseVariable {
                guard let value = io.environment[variable] else {
                    io.writeError("tether connect: --key-passphrase-env: environment variable \(variable) is not set\n")
                    return 2
                }
                passphrase = value
            }
            configuration.tls.clientIdentity = .pem(
                certificateChain: .pemFile(certificate), privateKey: .pemFile(key), passphrase: passphrase)
        }
        if let proxy = options.proxy { configuration.proxy = proxy }
        configuration.compression = options.deflate
        if let policy = options.interfaceSwitch { configuration.interfaceSwitch = policy }
        if let path = options.greetingFile {
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                io.writeError("tether connect: cannot read the greeting file \(path)\n")
                return 2
            }
            let greeting = text.split(separator: "\n", omittingEmptySubsequences: false)
                .map { WebSocketMessage.text(String($0.hasSuffix("\r") ? $0.dropLast() : $0)) }
                .dropLast(text.hasSuffix("\n") ? 1 : 0)
            let messages = Array(greeting)
            configuration.greeting = { messages }
        }
        let client: WebSocketClient
        do {
            client = try WebSocketClient(configuration: configuration)
        } catch {
            io.writeError("tether connect: \(error)\n")
            return 2  // bad arguments: the parser checks each option, the client checks them again
        }
        let (outcomes, outcome) = AsyncStream.makeStream(of: Outcome.self, bufferingPolicy: .unbounded)
        let output = OutputQueue(io: io)
        let status = StatusLine(output: output, errorIsTerminal: io.errorIsTerminal, url: options.url.redactedForLogs)
        let session = SessionWatch()
        let interruption = Interruption()

        let events = Task {
            await Self.consume(client.events, options: options, status: status, session: session, outcome: outcome)
        }
        let input = Task {
            guard options.readsStdin else { return }
            if options.queue {
                await Self.queue(io.inputLines(), client: client, status: status)
                await client.waitUntilOutboxEmpty()  // written (or reported) before the end of input ends it
            } else {
                await Self.send(io.inputLines(), client: client, status: status, session: session)
            }
            // Every line was sent. End once the connection attempt in progress, if any, has an outcome, so that
            // `< /dev/null` still reports a rejection (exit 3) instead of cutting the handshake short.
            if await session.waitUntilSettled() { outcome.yield(.inputEnded) }
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
        // Runs until the command returns: a signal during a slow shutdown bounds the shutdown too.
        let interrupt = Task {
            guard let waitForInterrupt = io.waitForInterrupt else { return }
            guard await waitForInterrupt() != 0 else { return }
            interruption.interrupt()
            outcome.yield(.interrupted)
        }

        await client.start()
        for await _ in outcomes { break }
        // From here on no message is printed and no line sent; the exit status is what the session says now.
        session.end()
        input.cancel()
        timer.cancel()
        let failure = session.failure
        let shutdown = Task {
            await client.stop()
            await events.value  // prints the records of the close, up to `.stopped`
            if let failure {
                let reason = failure.reason
                await status.error("stopped: \(reason?.name ?? "failed")\(Self.detail(of: reason)) (not retryable)\n")
            }
            status.finish()
            await output.finish()
        }
        if !(await interruption.wait(for: shutdown)) {
            // A signal, then the deadline: the peer or standard output did not keep up. Exit anyway.
            events.cancel()
            output.abandon()
        }
        interrupt.cancel()
        return failure == nil ? 0 : 3
    }

    /// Reads the client's events until our own `stop()`: prints them, updates the status line and the session
    /// watch, and reports the outcomes they decide. It waits for room in the output queue before it takes the next
    /// event, so a slow standard output slows the client's reading (and through it the server), not memory.
    private static func consume(
        _ events: WebSocketEvents,
        options: ConnectOptions,
        status: StatusLine,
        session: SessionWatch,
        outcome: AsyncStream<Outcome>.Continuation
    ) async {
        var received = 0
        /// Whether the last `.message` was shown: its record, which follows it, is shown with it or not at all.
        var lastMessageShown = false
        for await event in events {
            if Task.isCancelled { return }  // abandoned after a signal: not even the buffered events
            switch event {
            case .record(let record):
                // After the end was decided, per-message records are not shown, like the messages.
                if options.eventsJSONL, record.kind != .message || lastMessageShown {
                    await status.print(record.jsonLine + "\n")
                }
                if record.kind == .retryScheduled { await status.update(retryDelay: record.delay) }
                if record.kind == .handover || record.kind == .closed { await status.update(handover: record) }
                if let line = Self.attemptFailure(record) { await status.error(line) }
                if record.kind == .stopped { return }  // only our own stop() records it
            case .message(let message, _):
                lastMessageShown = false
                guard !session.isEnding else { continue }
                if let count = options.count, received >= count { continue }
                lastMessageShown = true
                received += 1
                if !options.eventsJSONL, !options.quiet {
                    await status.print(Self.body(of: message, raw: options.raw))
                }
                if let count = options.count, received >= count { outcome.yield(.countReached) }
            case .stateChanged(let state, _):
                session.update(state)
                await status.update(state)
                if state.phase == .failed { outcome.yield(.failed) }
            case .roundTrip(let milliseconds):
                await status.update(rtt: milliseconds)
            case .outboxDropped(let message, let reason):
                await status.error("queued message dropped (\(reason)): \(message.byteCount) bytes\n")
            case .unconfirmed(let unconfirmed):
                await status.error("connection lost: \(unconfirmed.messages.count + unconfirmed.notKept) sent "
                    + "messages may not have arrived (gen \(unconfirmed.generation))\n")
            }
        }
    }

    /// Sends each line as a text message, taking the next line only once the send has completed: standard input
    /// is read as fast as the connection takes it. A line read while no connection is open waits for the next
    /// open (nothing more is read meanwhile); a line that fails otherwise is reported and skipped.
    private static func send(
        _ lines: AsyncStream<String>,
        client: WebSocketClient,
        status: StatusLine,
        session: SessionWatch
    ) async {
        var tried = 0  // the generation of the last connection that refused a send as not open
        for await line in lines {
            while true {
                guard let generation = await session.waitUntilOpen(after: tried) else { return }
                do {
                    try await client.send(text: line)
                    break
                } catch WebSocketSendError.notOpen {
                    tried = generation  // closed in between: wait for a newer connection
                } catch {
                    await status.error("not sent (\(Self.describe(error))): \(line.utf8.count) bytes\n")
                    break
                }
            }
        }
    }

    /// `--queue`: each line goes to the client's outbox at once, whatever the connection; the outbox keeps their
    /// order across reconnects and writes them after the greeting. A line refused (outbox full) is reported.
    private static func queue(
        _ lines: AsyncStream<String>, client: WebSocketClient, status: StatusLine
    ) async {
        for await line in lines {
            do {
                try await client.send(.text(line), policy: .queued(expiresAfter: nil))
            } catch {
                await status.error("not queued (\(Self.describe(error))): \(line.utf8.count) bytes\n")
            }
        }
    }

    /// A received message as printed: text with its control characters escaped (`TerminalText`), or as received
    /// with `raw`; binary as its size.
    static func body(of message: WebSocketMessage, raw: Bool) -> String {
        switch message {
        case .text(let text): (raw ? text : TerminalText.escaped(text)) + "\n"
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
        case .handshakeRejected(let status)?, .proxyRejected(let status)?: " \(status)"
        case .proxyUnreachable(let failure, _)?, .connectFailed(let failure, _)?:
            " (\(failure)" + (reason?.detail.map { "; \($0)" } ?? "") + ")"
        case .socksRejected(let refusal)?: " (\(refusal))"
        case .peerClosed(let code?)?: " \(code)"
        case .protocolViolation(let code)?: " \(code)"
        case .handshakeInvalid(let detail)?, .tlsFailed(let detail)?: " (\(detail))"
        default: ""
        }
    }

    static func describe(_ error: any Error) -> String {
        switch error as? WebSocketSendError {
        case .notOpen?: "not open"
        case .messageTooLarge(let size, let limit)?: "\(size) bytes > limit \(limit)"
        case .connectionFailed?: "connection failed"
        case .outboxFull?: "outbox full"
        case nil: "\(error)"
        }
    }
}

