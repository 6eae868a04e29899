#if os(Linux)
import TetherPOSIX
import TetherWire

/// The handler of one accepted connection: a `Sendable` shell (so that timers and write
/// completions can capture it) around the driver, whose state lives on the loop thread.
final class ServerConnection: TCPConnectionHandler, Sendable {
    let driver: LoopBound<ConnectionDriver>

    init(index: Int, connection: TCPConnection, core: ServerCore) {
        self.driver = LoopBound(ConnectionDriver(index: index, connection: connection, core: core), loop: core.loop)
    }

    func received(_ bytes: UnsafeRawBufferPointer, on connection: TCPConnection) {
        self.driver.value.received(bytes, shell: self)
    }

    func ended(_ end: TCPConnection.End, on connection: TCPConnection) {
        self.driver.value.ended(end)
    }
}

/// Applies a scenario to one connection. Loop thread only.
///
/// Outgoing frames are encoded into one reusable buffer and written once per event (one read, one
/// timer), so an echo costs one copy of the payload and one `send` per batch of messages.
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
    private let connection: TCPConnection
    private let core: ServerCore
    private var phase = Phase.handshake
    private var requestParser: HandshakeRequestParser? = HandshakeRequestParser()
    private var scenario = Scenario()
    private var decoder: WebSocketDecoder
    private var encoder = WebSocketEncoder(role: .server)
    private var output: [UInt8] = []
    /// Close TCP once `output` is written (after a close frame).
    private var closeAfterWrite = false
    /// The reason recorded when the TCP connection ends, when the server decided it.
    private var endReason: ConnectionEnd?
    private var timers: [Int: TimerHandle] = [:]
    private var nextTimerID = 0
    private var scenarioStart = ContinuousClock.now
    private var streamSent = 0
    private var streamPayload: [UInt8] = []
    private var pingsSent: UInt64 = 0
    /// Still waiting for a complete upgrade request (counted by the core against its cap).
    private var inHandshake = true
    /// Closes the connection if the request is not complete in time.
    private var handshakeTimer: TimerHandle?

    init(index: Int, connection: TCPConnection, core: ServerCore) {
        self.index = index
        self.connection = connection
        self.core = core
        self.decoder = WebSocketDecoder(
            role: .server, maximumFrameSize: core.maximumMessageSize, maximumMessageSize: core.maximumMessageSize)
    }

    private var recorder: Recorder { self.core.recorder }

    // MARK: Input

    func received(_ bytes: UnsafeRawBufferPointer, shell: ServerConnection) {
        switch self.phase {
        case .handshake:
            self.readRequest(bytes, shell: shell)
        case .open, .closing:
            self.decoder.append(bytes)
            self.decodeMessages(shell: shell)
        case .ignoring, .finished:
            return  // nothing more is read into the protocol
        }
        self.flush()
    }

    func ended(_ end: TCPConnection.End) {
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
        self.recorder.update(self.index) { record, now in
            record.request = RequestRecord(
                at: now, target: request.target, headers: headers, subprotocols: request.subprotocols)
            return .request(path: pathOnly(request.target), headerCount: headers.count)
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
        self.scenarioStart = ContinuousClock.now
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
        self.recorder.update(self.index) { record, now in
            record.handshake = .accepted(subprotocol: subprotocol)
            record.openedAt = now
            return .opened(subprotocol: subprotocol)
        }
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
        if !request.remaining.isEmpty {
            self.decoder.append(request.remaining)
            self.decodeMessages(shell: shell)
        }
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

    private func decodeMessages(shell: ServerConnection) {
        do throws(ProtocolError) {
            while self.phase == .open || self.phase == .closing {
                let handled: Void? = try self.decoder.nextMessage { message in self.handle(message, shell: shell) }
                if handled == nil { return }
            }
        } catch {
            self.failProtocol(error)
        }
    }

    private func handle(_ message: BorrowedMessage, shell: ServerConnection) {
        switch message.opcode {
        case .text, .binary:
            let kind: Scenario.MessageKind = message.opcode == .text ? .text : .binary
            let size = message.payload.count
            let recordsPayload = self.scenario.recordsPayloads
            let echoes = self.scenario.echo && self.phase == .open
            if echoes { self.encoder.encode(message.opcode, payload: message.payload, into: &self.output) }
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
        case .ping:
            let payload = Array(message.payload)
            self.recorder.update(self.index) { record, now in
                record.pingsReceived.append(ControlFrameRecord(at: now, payload: payload))
                return .pingReceived(bytes: payload.count)
            }
            guard self.phase == .open else { return }
            switch self.scenario.pong {
            case .immediate: self.sendPong(payload)
            case .delayed(let milliseconds): self.schedule(.pong(payload), after: milliseconds, shell: shell)
            case .never: break
            }
        case .pong:
            let payload = Array(message.payload)
            self.recorder.update(self.index) { record, now in
                record.pongsReceived.append(ControlFrameRecord(at: now, payload: payload))
                return .pongReceived(bytes: payload.count)
            }
        case .close:
            let code = message.closeCode
            let reason = String(decoding: message.closeReason, as: UTF8.self)
            self.recorder.update(self.index) { record, now in
                record.closeReceived = CloseRecord(at: now, code: code, reason: reason)
                return .closeReceived(code: code)
            }
            if self.phase == .closing {
                self.endReason = .closeHandshakeCompleted(initiatedByServer: true)
            } else {
                // Echo the code (RFC 6455 §5.5.1); an empty close is answered with an empty one.
                self.sendClose(code: code, reason: "")
                self.endReason = .closeHandshakeCompleted(initiatedByServer: false)
            }
            self.finishAfterWrite()
        default:
            preconditionFailure("the decoder returns only text, binary, ping, pong and close")
        }
    }

    private func sendPong(_ payload: [UInt8]) {
        // A ping's payload is at most 125 bytes (the decoder checks), so the pong cannot fail.
        try? self.encoder.pong(payload, into: &self.output)
        self.recorder.update(self.index) { record, now in
            record.pongsSent.append(ControlFrameRecord(at: now, payload: payload))
            return .pongSent(bytes: payload.count)
        }
    }

    private func sendClose(code: UInt16?, reason: String) {
        // Codes come from a validated scenario, a protocol error, or the peer's valid close frame.
        try? self.encoder.close(code: code, reason: reason, into: &self.output)
        self.recorder.update(self.index) { record, now in
            record.closeSent = CloseRecord(at: now, code: code, reason: reason)
            return .closeSent(code: code)
        }
    }

    private func failProtocol(_ error: ProtocolError) {
        guard self.phase == .open || self.phase == .closing else { return }
        if self.phase == .open { self.sendClose(code: error.closeCode, reason: error.reason) }
        self.endReason = .protocolError(code: error.closeCode)
        self.finishAfterWrite()
    }

    // MARK: Stream and server pings

    private func sendStreamBatch(shell: ServerConnection) {
        guard self.phase == .open, let stream = self.scenario.stream else { return }
        let start = self.output.count
        while self.streamSent < stream.count, self.output.count - start < Self.streamBatchBytes {
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
        self.encoder.encode(stream.kind == .text ? .text : .binary, payload: self.streamPayload, into: &self.output)
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
        try? self.encoder.ping(payload, into: &self.output)
        self.recorder.update(self.index) { record, now in
            record.pingsSent.append(ControlFrameRecord(at: now, payload: payload))
            return .pingSent(bytes: payload.count)
        }
    }

    // MARK: Timers

    private func schedule(_ action: TimerAction, after milliseconds: Int, shell: ServerConnection) {
        self.schedule(action, at: ContinuousClock.now + .milliseconds(milliseconds), shell: shell)
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
            self.sendPong(payload)
        case .close:
            guard self.phase == .open, let close = self.scenario.close else { return }
            self.sendClose(code: close.code, reason: close.reason)
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

    /// Nothing more is sent; what is in `output` is dropped.
    private func finish() {
        self.phase = .finished
        self.closeAfterWrite = false
        self.output.removeAll()
        self.cancelTimers()
    }

    private func flush(completion: TCPConnection.WriteCompletion? = nil) {
        if !self.output.isEmpty {
            // The connection keeps the array only for bytes the kernel did not take; otherwise the
            // buffer is unique again below and its capacity is reused.
            self.connection.write(self.output, completion: completion)
            self.output.removeAll(keepingCapacity: self.output.capacity <= Self.retainedOutputCapacity)
        } else if let completion {
            self.core.loop.execute { completion(.success(())) }
        }
        if self.closeAfterWrite {
            self.closeAfterWrite = false
            self.connection.close()
        }
    }
}
#endif
