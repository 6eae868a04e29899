#if os(Linux)
import TetherPOSIX
import TetherWire

/// The handler of one accepted connection: a `Sendable` shell (so that timers and write
/// completions can capture it) around the driver, whose state lives on the loop thread.
final class ServerConnection: ByteStreamHandler, Sendable {
    let driver: LoopBound<ConnectionDriver>

    init(index: Int, connection: any ByteStream, core: ServerCore) {
        self.driver = LoopBound(ConnectionDriver(index: index, connection: connection, core: core), loop: core.loop)
    }

    func received(_ bytes: UnsafeRawBufferPointer, on stream: any ByteStream) {
        self.driver.value.received(bytes, shell: self)
    }

    func ended(_ end: ByteStreamEnd, on stream: any ByteStream) {
        self.driver.value.ended(end)
    }
}

/// Applies a scenario to one connection. Loop thread only.
///
/// After the handshake, the WebSocket rules (the close echo, violations to close codes, pongs when the scenario
/// answers at once) are the shared engine's, `WebSocketConnection`; this type is the scenario and the recording
/// around it. The engine encodes outgoing frames into one reusable buffer that is written once per event (one
/// read, one timer), so an echo costs one copy of the payload and one `send` per batch of messages.
///
/// Bounded: while the bytes waiting for the client (echoes, pongs) are above the server's outbound high
/// watermark, the connection stops reading until they are down to the low one, so a client that sends and never
/// reads slows itself down instead of growing the server's memory.
final class ConnectionDriver {
    private enum Phase {
        /// Reading the upgrade request.
        case handshake
        /// The request was recorded and will never be answered.
        case ignoring
        /// The WebSocket is open.
        case open
        /// The server sent its close frame and waits for the client's.
        case closing
        /// The TCP connection is being closed or has ended; nothing more is sent.
        case finished
    }

    private enum TimerAction {
        case pong([UInt8])
        case close
        case reset
        case stream
        case ping
        case closeTimeout
    }

    /// A batch of streamed messages stops growing at this size, so pongs wait for at most one batch.
    private static let streamBatchBytes = 64 << 10
    /// The output buffer's capacity is kept up to this size between writes.
    private static let retainedOutputCapacity = 4 << 20

    let index: Int
    /// The TCP connection, or TLS over it.
    private let connection: any ByteStream
    private let core: ServerCore
    private var phase = Phase.handshake
    private var requestParser: HandshakeRequestParser? = HandshakeRequestParser()
    private var scenario = Scenario()
    /// The WebSocket engine, from the accepted handshake on.
    private var webSocket: WebSocketConnection<SystemRandomNumberGenerator>?
    /// HTTP bytes to write (the handshake's answer), before the engine's output.
    private var output: [UInt8] = []
    /// The connection, for the callbacks that need it (set when its handshake timer starts).
    private weak var shell: ServerConnection?
    /// Reading stopped until the write queue is down to the outbound low watermark.
    private var waitingForWriteRoom = false
    /// Close TCP once the output is written (after a close frame).
    private var closeAfterWrite = false
    /// The reason recorded when the TCP connection ends, when the server decided it.
    private var endReason: ConnectionEnd?
    private var timers: [Int: TimerHandle] = [:]
    private var nextTimerID = 0
    /// When the connection opened: the scenario's timed actions count from it.
    private var scenarioStart = ContinuousClock.now
    private var streamSent = 0
    private var streamPayload: [UInt8] = []
    private var pingsSent: UInt64 = 0
    /// Still waiting for a complete upgrade request (counted by the core against its cap).
    private var inHandshake = true
    /// Closes the connection if the request is not complete in time.
    private var handshakeTimer: TimerHandle?

    init(index: Int, connection: any ByteStream, core: ServerCore) {
        self.index = index
        self.connection = connection
        self.core = core
    }

    private var recorder: Recorder { self.core.recorder }

    // MARK: Input

    func received(_ bytes: UnsafeRawBufferPointer, shell: ServerConnection) {
        switch self.phase {
        case .handshake:
            self.readRequest(bytes, shell: shell)
        case .open, .closing:
            self.webSocket?.receive(bytes)
            self.decodeMessages(shell: shell)
        case .ignoring, .finished:
            return  // nothing more is read into the protocol
        }
        self.flush()
    }

    func ended(_ end: ByteStreamEnd) {
        self.leaveHandshake()
        self.cancelTimers()
        self.phase = .finished
        let reason =
            self.endReason
            ?? {
                switch end {
                case .endOfStream: .peerClosedWithoutCloseFrame
                case .failed(.reset), .failed(.brokenPipe): .peerReset
                case .failed(let error): .socketError(error.description)
                case .closedLocally: .serverStopped
                case .tlsFailed(.truncated): .peerClosedWithoutCloseFrame
                case .tlsFailed(let failure): .tlsFailed(failure.description)
                }
            }()
        self.recorder.update(self.index) { record, now in
            record.end = EndRecord(at: now, reason: reason)
            return .ended(reason)
        }
        self.core.connectionEnded(self.index)
    }

    /// `TestServer.stop()`: reset at once.
    func stop() {
        self.endReason = self.endReason ?? .serverStopped
        self.finish()
        self.connection.reset()
    }

    // MARK: Handshake

    /// Called once, right after the connection is accepted: the request must be complete within the
    /// server's handshake timeout.
    func startHandshakeTimer(shell: ServerConnection) {
        self.shell = shell
        self.handshakeTimer = self.core.loop.schedule(after: self.core.handshakeTimeout) {
            shell.driver.value.handshakeTimedOut()
        }
    }

    /// The request did not arrive in time: close without an answer.
    private func handshakeTimedOut() {
        self.handshakeTimer = nil
        guard self.inHandshake, self.phase == .handshake else { return }
        self.leaveHandshake()
        self.endReason = .handshakeTimedOut
        self.finish()
        self.connection.close()
    }

    /// The core makes room for a newer connection (too many in the handshake, or out of descriptors):
    /// reset at once, which frees the descriptor now.
    func dropInHandshake() {
        guard self.inHandshake, self.phase == .handshake else { return }
        self.leaveHandshake()
        self.endReason = .handshakeDropped
        self.finish()
        self.connection.reset()
    }

    /// The connection no longer waits for its request (read, timed out, dropped or ended). Idempotent.
    private func leaveHandshake() {
        guard self.inHandshake else { return }
        self.inHandshake = false
        self.handshakeTimer?.cancel()
        self.handshakeTimer = nil
        self.core.handshakeEnded(self.index)
    }

    private func readRequest(_ bytes: UnsafeRawBufferPointer, shell: ServerConnection) {
        guard var parser = self.requestParser else { return }
        self.requestParser = nil
        parser.append(bytes)
        let request: HandshakeRequest
        do throws(HandshakeError) {
            guard let parsed = try parser.parse() else {
                self.requestParser = parser
                return
            }
            request = parsed
        } catch {
            self.leaveHandshake()
            self.rejectBadUpgrade(error)
            return
        }
        self.leaveHandshake()
        let headers = request.headers.map { HeaderField(name: $0.name, value: $0.value) }
        // The TLS handshake has completed: the request came through it.
        let tls = self.connection as? TLSStream
        let tlsResumed = tls?.isResumed
        let clientSubject = tls?.peerCertificateSubject
        self.recorder.update(self.index) { record, now in
            record.request = RequestRecord(
                at: now, target: request.target, headers: headers, subprotocols: request.subprotocols)
            record.tlsResumed = tlsResumed
            record.clientCertificateSubject = clientSubject
            return .request(
                path: pathOnly(request.target), headerCount: headers.count, clientCertificate: clientSubject)
        }
        let context = ConnectionContext(
            index: self.index, target: request.target, headers: headers, subprotocols: request.subprotocols)
        let scenario = self.core.scenario(context)
        do throws(TestServerError) {
            try scenario.validate()
        } catch {
            self.reject(status: 500, retryAfterSeconds: nil)
            return
        }
        self.scenario = scenario
        self.recorder.update(self.index) { record, _ in
            record.scenario = scenario
            return nil
        }
        switch scenario.handshake {
        case .reject(let status, let retryAfterSeconds):
            self.reject(status: status, retryAfterSeconds: retryAfterSeconds)
        case .ignore:
            self.phase = .ignoring
            self.recorder.update(self.index) { record, _ in
                record.handshake = .ignored
                return .handshakeIgnored
            }
            if let reset = scenario.resetAfterMilliseconds { self.schedule(.reset, after: reset, shell: shell) }
        case .accept:
            self.accept(request, shell: shell)
        }
    }

    private func accept(_ request: HandshakeRequest, shell: ServerConnection) {
        let scenario = self.scenario
        let subprotocol = scenario.subprotocol.flatMap { request.subprotocols.contains($0) ? $0 : nil }
        self.output.append(contentsOf: ServerHandshake.accept(request, subprotocol: subprotocol))
        self.phase = .open
        var webSocket = WebSocketConnection(
            role: .server, maximumMessageSize: self.core.maximumMessageSize,
            automaticPongs: scenario.pong == .immediate)
        webSocket.receive(request.remaining)
        self.webSocket = webSocket
        self.recorder.update(self.index) { record, now in
            record.handshake = .accepted(subprotocol: subprotocol)
            record.openedAt = now
            return .opened(subprotocol: subprotocol)
        }
        // The scenario's times (pings, stream, close, reset) count from here, no earlier than the recorded open.
        self.scenarioStart = self.core.loop.now
        if let close = scenario.close { self.schedule(.close, after: close.afterMilliseconds, shell: shell) }
        if let reset = scenario.resetAfterMilliseconds { self.schedule(.reset, after: reset, shell: shell) }
        if let interval = scenario.pingIntervalMilliseconds { self.schedule(.ping, after: interval, shell: shell) }
        if let stream = scenario.stream, stream.count > 0 {
            self.streamPayload = [UInt8](repeating: UInt8(ascii: "."), count: stream.size)
            if stream.intervalMilliseconds == 0 {
                self.sendStreamBatch(shell: shell)
            } else {
                self.schedule(.stream, after: 0, shell: shell)
            }
        }
        self.decodeMessages(shell: shell)
    }

    private func reject(status: Int, retryAfterSeconds: Int?) {
        self.output.append(contentsOf: ServerHandshake.reject(
            status: status, reason: Self.reasonPhrase(status), retryAfterSeconds: retryAfterSeconds))
        self.endReason = .handshakeRejected(status: status)
        self.finishAfterWrite()
        self.recorder.update(self.index) { record, _ in
            record.handshake = .rejected(status: status, retryAfterSeconds: retryAfterSeconds)
            return .rejected(status: status, retryAfterSeconds: retryAfterSeconds)
        }
    }

    private func rejectBadUpgrade(_ error: HandshakeError) {
        // HandshakeError never echoes header values, so its text is safe to record and print.
        let reason: String =
            switch error {
            case .malformed(let detail), .invalidUpgrade(let detail): detail
            case .headerTooLarge(let limit): "header block over \(limit) bytes"
            case .rejected(let status, _): "unexpected status \(status)"
            }
        self.output.append(contentsOf: ServerHandshake.reject(status: 400, reason: "Bad Request"))
        self.endReason = .handshakeRejected(status: 400)
        self.finishAfterWrite()
        self.recorder.update(self.index) { record, _ in
            record.handshake = .invalid(reason: reason)
            return .badUpgrade(reason: reason)
        }
    }

    static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 426: "Upgrade Required"
        case 429: "Too Many Requests"
        case 500: "Internal Server Error"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        default: "Rejected"
        }
    }

    // MARK: Messages

    /// Handles every event the engine has, until more bytes are needed or the connection is over. A pong the engine
    /// owes goes out per ping while the write queue has room; while it has none, the engine coalesces them.
    private func decodeMessages(shell: ServerConnection) {
        while case .some(let outcome) = self.webSocket?.nextEvent({ self.handle($0) }) {
            switch outcome {
            case .handled:
                continue
            case .message(let echo):
                if echo { self.webSocket?.echoLastMessage() }
            case .ping(let payload):
                switch self.scenario.pong {
                case .immediate:
                    // The engine owes the pong: out at once while the kernel takes everything, else coalesced.
                    if !self.waitingForWriteRoom, self.connection.queuedWriteBytes == 0 { self.flush() }
                case .delayed(let milliseconds): self.schedule(.pong(payload), after: milliseconds, shell: shell)
                case .never: break
                }
            case .closed(let closure, let phase):
                self.connectionClosed(closure, in: phase)
                return
            }
        }
    }

    /// What handling an event left to do once the engine has returned.
    private enum Outcome {
        case handled
        /// A data message arrived; echo it when `echo`.
        case message(echo: Bool)
        /// A ping arrived while open.
        case ping([UInt8])
        /// The connection is over; `phase` is the one it was in.
        case closed(WebSocketConnection<SystemRandomNumberGenerator>.Closure, in: Phase)
    }

    /// Records one event; the engine is mid-call, so nothing here touches it.
    private func handle(_ event: WebSocketConnection<SystemRandomNumberGenerator>.Event) -> Outcome {
        guard case .received(let message) = event else {
            guard case .closed(let closure) = event else { preconditionFailure("an event is received or closed") }
            return .closed(closure, in: self.phase)
        }
        switch message.opcode {
        case .text, .binary:
            let kind: Scenario.MessageKind = message.opcode == .text ? .text : .binary
            let size = message.payload.count
            let recordsPayload = self.scenario.recordsPayloads
            let echoes = self.scenario.echo && self.phase == .open
            self.recorder.update(self.index) { record, now in
                record.messageCount += 1
                record.messageBytes += size
                // Kept up to the record limit; the payload is copied only when kept.
                record.messages.append(MessageRecord(
                    at: now, kind: kind, size: size, payload: recordsPayload ? Array(message.payload) : nil))
                if echoes {
                    record.sentMessageCount += 1
                    record.sentMessageBytes += size
                }
                return .message(kind, bytes: size)
            }
            return .message(echo: echoes)
        case .ping:
            let payload = Array(message.payload)
            self.recorder.update(self.index) { record, now in
                record.pingsReceived.append(ControlFrameRecord(at: now, payload: payload))
                return .pingReceived(bytes: payload.count)
            }
            return self.phase == .open ? .ping(payload) : .handled
        case .pong:
            let payload = Array(message.payload)
            self.recorder.update(self.index) { record, now in
                record.pongsReceived.append(ControlFrameRecord(at: now, payload: payload))
                return .pongReceived(bytes: payload.count)
            }
            return .handled
        default:
            preconditionFailure("the engine lends only text, binary, ping and pong frames")
        }
    }

    private func connectionClosed(_ closure: WebSocketConnection<SystemRandomNumberGenerator>.Closure, in phase: Phase) {
        switch closure {
        case .byPeer(let code, let reason):
            self.recordCloseReceived(code: code, reason: reason)
            self.recordCloseSent(code: code, reason: "")  // the engine echoed the code (RFC 6455 §5.5.1)
            self.endReason = .closeHandshakeCompleted(initiatedByServer: false)
        case .byUs(_, let code, let reason):
            self.recordCloseReceived(code: code, reason: reason)
            self.endReason = .closeHandshakeCompleted(initiatedByServer: true)
        case .violation(let error):
            if phase == .open { self.recordCloseSent(code: error.closeCode, reason: error.reason) }
            self.endReason = .protocolError(code: error.closeCode)
        }
        self.finishAfterWrite()
    }

    private func recordCloseReceived(code: UInt16?, reason: String) {
        self.recorder.update(self.index) { record, now in
            record.closeReceived = CloseRecord(at: now, code: code, reason: reason)
            return .closeReceived(code: code)
        }
    }

    private func recordCloseSent(code: UInt16?, reason: String) {
        self.recorder.update(self.index) { record, now in
            record.closeSent = CloseRecord(at: now, code: code, reason: reason)
            return .closeSent(code: code)
        }
    }

    private func recordPongSent(_ payload: [UInt8]) {
        self.recorder.update(self.index) { record, now in
            record.pongsSent.append(ControlFrameRecord(at: now, payload: payload))
            return .pongSent(bytes: payload.count)
        }
    }

    // MARK: Stream and server pings

    private func sendStreamBatch(shell: ServerConnection) {
        guard self.phase == .open, let stream = self.scenario.stream else { return }
        let start = self.webSocket?.outputByteCount ?? 0
        while self.streamSent < stream.count, (self.webSocket?.outputByteCount ?? 0) - start < Self.streamBatchBytes {
            self.encodeStreamMessage(stream)
        }
        if self.streamSent == stream.count {
            self.finishStream(stream)
            self.flush()
            return
        }
        // The next batch goes out once this one is in the kernel: reads (and pongs) run in between.
        self.flush { result in
            guard case .success = result else { return }
            shell.driver.value.sendStreamBatch(shell: shell)
        }
    }

    private func encodeStreamMessage(_ stream: Scenario.Stream) {
        let digits = Array(String(self.streamSent).utf8)
        let size = stream.size
        self.streamPayload.withUnsafeMutableBufferPointer { payload in
            for (offset, digit) in digits.prefix(size).enumerated() { payload[offset] = digit }
        }
        self.streamPayload.withUnsafeBytes { payload in
            _ = self.webSocket?.send(stream.kind == .text ? .text : .binary, payload: payload)
        }
        for offset in 0..<min(digits.count, size) { self.streamPayload[offset] = UInt8(ascii: ".") }
        self.streamSent += 1
        self.recorder.update(self.index) { record, _ in
            record.sentMessageCount += 1
            record.sentMessageBytes += size
            return nil
        }
    }

    private func finishStream(_ stream: Scenario.Stream) {
        self.streamPayload = []
        self.recorder.update(self.index) { _, _ in .streamFinished(count: stream.count) }
    }

    private func sendPing() {
        self.pingsSent += 1
        let payload = (0..<8).reversed().map { UInt8(truncatingIfNeeded: self.pingsSent >> (UInt64($0) * 8)) }
        // An 8-byte payload always fits a ping.
        _ = try? self.webSocket?.ping(payload)
        self.recorder.update(self.index) { record, now in
            record.pingsSent.append(ControlFrameRecord(at: now, payload: payload))
            return .pingSent(bytes: payload.count)
        }
    }

    // MARK: Timers

    private func schedule(_ action: TimerAction, after milliseconds: Int, shell: ServerConnection) {
        self.schedule(action, at: self.core.loop.now + .milliseconds(milliseconds), shell: shell)
    }

    private func schedule(_ action: TimerAction, at deadline: ContinuousClock.Instant, shell: ServerConnection) {
        self.nextTimerID += 1
        let id = self.nextTimerID
        self.timers[id] = self.core.loop.schedule(at: deadline) {
            shell.driver.value.timerFired(id, action, shell: shell)
        }
    }

    private func timerFired(_ id: Int, _ action: TimerAction, shell: ServerConnection) {
        self.timers[id] = nil
        switch action {
        case .pong(let payload):
            guard self.phase == .open else { return }
            // A ping's payload is at most 125 bytes (the engine checks), so the pong cannot fail.
            if (try? self.webSocket?.pong(payload)) == true { self.recordPongSent(payload) }
        case .close:
            guard self.phase == .open, let close = self.scenario.close else { return }
            // Codes come from a validated scenario.
            self.webSocket?.close(code: close.code, reason: close.reason)
            self.recordCloseSent(code: close.code, reason: close.reason)
            self.phase = .closing
            self.cancelTimers()
            self.schedule(.closeTimeout, after: self.scenario.closeTimeoutMilliseconds, shell: shell)
            if let reset = self.scenario.resetAfterMilliseconds, reset > close.afterMilliseconds {
                self.schedule(.reset, at: self.scenarioStart + .milliseconds(reset), shell: shell)
            }
        case .reset:
            guard self.phase != .finished else { return }
            self.endReason = .serverReset
            self.finish()
            self.connection.reset()
            return
        case .stream:
            guard self.phase == .open, let stream = self.scenario.stream else { return }
            self.encodeStreamMessage(stream)
            if self.streamSent < stream.count {
                let next = self.scenarioStart + .milliseconds(self.streamSent * stream.intervalMilliseconds)
                self.schedule(.stream, at: next, shell: shell)
            } else {
                self.finishStream(stream)
            }
        case .ping:
            guard self.phase == .open, let interval = self.scenario.pingIntervalMilliseconds else { return }
            self.sendPing()
            let next = self.scenarioStart + .milliseconds(Int(self.pingsSent + 1) * interval)
            self.schedule(.ping, at: next, shell: shell)
        case .closeTimeout:
            guard self.phase == .closing else { return }
            self.endReason = .closeTimedOut
            self.finish()
            self.connection.reset()
            return
        }
        self.flush()
    }

    private func cancelTimers() {
        for timer in self.timers.values { timer.cancel() }
        self.timers.removeAll()
    }

    // MARK: Output

    /// Nothing more is sent after what is in `output`; then TCP is closed.
    private func finishAfterWrite() {
        self.phase = .finished
        self.closeAfterWrite = true
        self.cancelTimers()
    }

    /// Nothing more is sent; what is in the output is dropped.
    private func finish() {
        self.phase = .finished
        self.closeAfterWrite = false
        self.output.removeAll()
        self.webSocket = nil
        self.cancelTimers()
    }

    /// Writes the handshake's answer, then the engine's output (a pong owed first, recorded), with `completion` on
    /// the last write; then closes TCP when asked, and stops reading while the write queue is over its watermark.
    private func flush(completion: TCPConnection.WriteCompletion? = nil) {
        if !self.output.isEmpty {
            // The connection copies only the bytes the kernel did not take, so the buffer stays unique and its
            // capacity is reused.
            self.output.withUnsafeBytes { self.connection.write(borrowing: $0, sealing: false, completion: nil) }
            self.output.removeAll(keepingCapacity: self.output.capacity <= Self.retainedOutputCapacity)
        }
        if let pong = self.webSocket?.owedPongPayload { self.recordPongSent(pong) }
        var completion = completion
        // A large echo's frame is queued as the engine's own array: the message is not copied once more.
        self.webSocket?.drainOutput(
            lending: { bytes, seals in
                self.connection.write(borrowing: bytes, sealing: seals, completion: completion)
                completion = nil
            },
            giving: { bytes, seals in
                self.connection.write(bytes, sealing: seals, completion: completion)
                completion = nil
            })
        if let completion {
            self.core.loop.execute { completion(.success(())) }
        }
        if self.closeAfterWrite {
            self.closeAfterWrite = false
            self.connection.close()
        }
        self.stopReadingWhileTheQueueIsFull()
    }

    private func stopReadingWhileTheQueueIsFull() {
        let watermarks = self.core.outboundWatermarks
        guard !self.waitingForWriteRoom, self.phase == .open || self.phase == .closing,
              self.connection.queuedWriteBytes > watermarks.high, let shell = self.shell else { return }
        self.waitingForWriteRoom = true
        self.connection.pauseReading()
        let queued = self.connection.queuedWriteBytes
        self.recorder.update(self.index) { _, _ in .readingPaused(queuedBytes: queued) }
        self.connection.whenQueuedWrites(atMost: watermarks.low) {
            shell.driver.value.writeRoomAvailable()
        }
    }

    private func writeRoomAvailable() {
        self.waitingForWriteRoom = false
        guard self.phase == .open || self.phase == .closing else { return }
        self.connection.resumeReading()
        self.recorder.update(self.index) { _, _ in .readingResumed }
    }
}
#endif
