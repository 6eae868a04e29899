import Foundation
import Tether
import TetherCore
import TetherTesting

/// `tether connect URL`: an interactive client. Lines on stdin are sent as text messages, received messages are
/// printed, and a status line (stderr) shows state, generation, last RTT, attempt and next retry.
package enum ConnectCommand {
    /// What ends the command. The exit status does not depend on which came first: it is 3 when the session had
    /// failed by then, 0 otherwise (or 128 + the signal when a signal came before any connection opened).
    enum Outcome: Sendable, Equatable {
        case countReached
        case durationElapsed
        /// Standard input ended, every line was sent, and no connection attempt is in progress. Without `--count`
        /// and `--duration` only: with either, that is what ends the command.
        case inputEnded
        /// SIGINT or SIGTERM, with its number.
        case interrupted(Int32)
        case failed
    }

    /// - Returns: 0 on a clean exit (count or duration reached, end of stdin, SIGINT/SIGTERM once a connection had
    ///   opened: the connection is closed with 1000 first), 3 when the connection stopped for a non-retryable reason
    ///   (state `.failed`), 128 + the signal's number (130 for SIGINT) when a signal came before any connection
    ///   opened, as a shell reports a command the signal ended.
    package static func run(_ options: ConnectOptions, io: CommandIO) async -> Int32 {
        var configuration = WebSocketClient.Configuration(
            url: options.url,
            headers: options.headers.map { (name: $0.name, value: $0.value) },
            subprotocols: options.protocols,
            heartbeatInterval: .milliseconds(options.interval),
            heartbeatTimeout: .milliseconds(options.timeout),
            connectTimeout: .milliseconds(options.connectTimeout),
            backoff: BackoffPolicy(
                base: .milliseconds(options.backoffBase), factor: 2, cap: .milliseconds(options.backoffCap)),
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
        if options.acknowledged {
            configuration.delivery.acknowledgements = TestServerDeliveryProtocol.acknowledgements()
        }
        if !options.feeds.isEmpty {
            configuration.delivery.feeds = TestServerDeliveryProtocol.feeds(options.feeds)
        }
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
        // Keys typed on a terminal are read and drawn by the command itself, below the status line.
        let terminal = options.readsStdin && io.errorIsTerminal ? io.keyboard.flatMap(TerminalMode.init) : nil
        let status = StatusLine(
            output: output, errorIsTerminal: io.errorIsTerminal, outputIsTerminal: io.outputIsTerminal,
            interactive: terminal != nil, url: options.url.redactedForLogs, columns: io.columns)
        let session = SessionWatch()
        let interruption = Interruption()
        let lines: @Sendable () -> AsyncStream<String> = if let keyboard = io.keyboard, terminal != nil {
            { TerminalInput(descriptor: keyboard, status: status).lines() }
        } else {
            io.inputLines
        }

        let events = Task {
            await Self.consume(client.events, options: options, status: status, session: session, outcome: outcome)
        }
        let input = Task {
            guard options.readsStdin else { return }
            if options.acknowledged {
                await Self.sendAcknowledged(lines(), client: client, status: status)
                await client.waitUntilOutboxEmpty()  // acknowledged (or given up) before the end of input ends it
            } else if options.queue {
                await Self.queue(lines(), client: client, status: status)
                await client.waitUntilOutboxEmpty()  // written (or reported) before the end of input ends it
            } else {
                await Self.send(lines(), client: client, status: status, session: session)
            }
            // With --count or --duration, that ends the command: replies may come long after the last line.
            guard options.count == nil, options.duration == nil else { return }
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
            let signal = await waitForInterrupt()
            guard signal != 0 else { return }
            terminal?.restore()  // at once: a second signal kills the command, which must not leave the terminal raw
            interruption.interrupt()
            outcome.yield(.interrupted(signal))
        }

        await client.start()
        var ending: Outcome = .failed
        for await first in outcomes {
            ending = first
            break
        }
        // From here on no line is sent, and no message printed unless the input's end ended the command: then the
        // replies to the last lines, which arrive before the server's close, are printed until the closing
        // handshake ends. The exit status is what the session says now.
        session.end(printing: ending == .inputEnded)
        input.cancel()
        timer.cancel()
        let failure = session.failure
        let neverOpened = !session.hasOpened
        if case .interrupted = ending, neverOpened {
            // Said now, not after the close: the deadline after a signal may drop what the shutdown prints.
            status.errorNow("interrupted before any connection opened\n")
        }
        let shutdown = Task {
            await client.stop()
            client.finishEvents()  // after what the close delivered: `events` ends once the consumer has it all
            await events.value
            if let failure {
                await status.error("stopped: \(Self.describeStop(failure.reason)) (not retryable)\n")
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
        terminal?.restore()
        if failure != nil { return 3 }
        if case .interrupted(let signal) = ending, neverOpened { return 128 + signal }
        return 0
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
        /// The last `.message`, when it was shown: its record, which follows it, is shown with it or not at all.
        var lastMessageShown: WebSocketMessage?
        for await event in events {
            if Task.isCancelled { return }  // abandoned after a signal: not even the buffered events
            switch event {
            case .record(let record):
                // After the end was decided, per-message records are not shown, like the messages.
                if options.eventsJSONL, record.kind != .message || lastMessageShown != nil {
                    let line = options.eventsText && record.kind == .message
                        ? Self.jsonLine(record, with: lastMessageShown) : record.jsonLine
                    await status.print(line + "\n")
                }
                if record.kind == .retryScheduled { await status.update(retryDelay: record.delay) }
                if record.kind == .handover || record.kind == .closed { await status.update(handover: record) }
                if let line = Self.attemptFailure(record) { await status.error(line) }
            case .message(let message, _):
                lastMessageShown = nil
                guard session.printsMessages else { continue }
                if let count = options.count, received >= count { continue }
                lastMessageShown = message
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
            case .delivery(let delivery):
                await status.error(Self.describe(delivery))
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

    /// `--acknowledged`: each line goes as an acknowledged send of the test server's delivery protocol, `send ID
    /// LINE`, with an id of this run (`<run>-<n>`: the server takes each id once, whatever run sent it first).
    private static func sendAcknowledged(
        _ lines: AsyncStream<String>, client: WebSocketClient, status: StatusLine
    ) async {
        let run = String(UInt32.random(in: 0...UInt32.max), radix: 16)
        var number = 0
        for await line in lines {
            number += 1
            let id = "\(run)-\(number)"
            do {
                try await client.send(TestServerDeliveryProtocol.send(id: id, body: line), id: id)
            } catch {
                await status.error("not queued (\(error)): \(line.utf8.count) bytes\n")
            }
        }
    }

    /// `record`'s JSON line with the message it is about (`--events-text`): its text as `text`, or a binary message's
    /// bytes in base64 as `base64`.
    static func jsonLine(_ record: LogRecord, with message: WebSocketMessage?) -> String {
        guard case .object(var members) = record.json, let message else { return record.jsonLine }
        switch message {
        case .text(let text): members.append(("text", .string(text)))
        case .binary(let data): members.append(("base64", .string(data.base64EncodedString())))
        }
        return JSONValue.object(members).serialized()
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
    /// `attempt failed: handshake_invalid (Sec-WebSocket-Accept does not match the key)`), then the steps the attempt
    /// reached when the transport timed them (`[resolve +0 0ms, tcp [127.0.0.1:1 +0 0ms refused]]`); nil for any
    /// other record. A failure that stops the session gets its `stopped:` line instead.
    static func attemptFailure(_ record: LogRecord) -> String? {
        guard record.kind == .closed, record.from == .connecting, record.to != .failed, let reason = record.reason,
            reason != .userStopped, reason != .enteredBackground
        else {
            return nil
        }
        let timings = record.timings.map { " [\($0)]" } ?? ""
        return "attempt failed: \(reason.name)\(Self.detail(of: reason))\(timings)\n"
    }

    /// The reason a session stopped on, as its `stopped:` line names it: the reason, its detail, and for a refusal of
    /// the credentials what that is (`handshake_rejected 401 Unauthorized: the server refused the credentials`).
    static func describeStop(_ reason: CloseReason?) -> String {
        var text = (reason?.name ?? "failed") + Self.detail(of: reason)
        switch reason {
        case .handshakeRejected(401)?, .handshakeRejected(403)?:
            text += ": the server refused the credentials (see --header)"
        case .proxyRejected(401)?, .proxyRejected(403)?, .proxyRejected(407)?:
            text += ": the proxy refused the credentials"
        default:
            break
        }
        return text
    }

    static func detail(of reason: CloseReason?) -> String {
        switch reason {
        case .handshakeRejected(let status)?, .proxyRejected(let status)?: " \(HTTPStatusText.described(status))"
        case .proxyUnreachable(let failure, _)?, .connectFailed(let failure, _)?:
            " (\(failure)" + (reason?.detail.map { "; \($0)" } ?? "") + ")"
        case .socksRejected(let refusal)?: " (\(refusal))"
        case .peerClosed(let code?)?: " \(code)"
        case .protocolViolation(let code)?: " \(code)"
        case .handshakeInvalid(let detail)?, .tlsFailed(let detail)?: " (\(detail))"
        case .redirectFailed(let failure)?: " (\(failure))"
        default: ""
        }
    }

    /// The stderr line of a delivery event: what became of a `--acknowledged` line, or a gap in a `--feed`.
    static func describe(_ delivery: DeliveryEvent) -> String {
        switch delivery {
        case .acknowledged(let id, let writes):
            "acknowledged \(id)" + (writes > 1 ? " (written \(writes) times)" : "") + "\n"
        case .expired(let id, let message, let writes):
            "not acknowledged in time: \(id), \(message.byteCount) bytes, written \(writes) times\n"
        case .gaveUp(let id, let message, let writes, let reason):
            "gave up (\(reason)): \(id), \(message.byteCount) bytes, written \(writes) times\n"
        case .gap(let gap):
            "gap in feed \(gap.stream): \(gap.lastDelivered) then \(gap.firstReceived) (\(gap.missing) missing)\n"
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

