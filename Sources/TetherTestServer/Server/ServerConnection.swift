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
/// After the handshake, the WebSocket protocol (pongs, the close echo and timeout, violations to close codes, the
/// outbound watermarks) is the shared engine's, run by a `WebSocketDriver` as for the client; this type is the
/// handshake, the scenario and the recording around it. The engine encodes outgoing frames into one reusable buffer
/// that is written once per batch (one read, one timer), so an echo costs one copy of the payload and one write per
/// batch of messages.
final class ConnectionDriver {
    typealias WebSocket = WebSocketDriver

    private enum Phase {
        /// Reading the upgrade request.
        case handshake(HandshakeRequestParser)
        /// The request was recorded and will never be answered.
        case ignoring
        /// The WebSocket is open (or closing), run by its driver.
        case webSocket(WebSocket)
        /// The connection is being closed or has ended; nothing more is read into the protocol.
        case finished
    }

    private enum TimerAction {
        case pong([UInt8])
        case close
        case reset
        case stream
        case ping
        /// Number `k` of the server's broadcast.
        case broadcast(Int)
        /// The delivery protocol's feeds reach number `k`.
        case feedTick(UInt64)
    }

    /// What a delivered message asks of the scenario once the engine is unlocked.
    enum Delivery {
        case echo
        case pongLater([UInt8])
        /// A message of the delivery protocol (`Scenario.DeliveryProtocol`).
        case command(Scenario.DeliveryProtocol.Command)
    }

    /// A batch of streamed messages stops growing at this size, so pongs wait for at most one batch.
    private static let streamBatchBytes = 64 << 10

    let index: Int
    /// The TCP connection, or TLS over it.
    private let connection: any ByteStream
    private let core: ServerCore
    private var phase = Phase.handshake(HandshakeRequestParser())
    private var scenario = Scenario()
    /// The connection, for the callbacks that need it (set when its handshake timer starts).
    private weak var shell: ServerConnection?
    /// The server sent its close frame: messages are recorded but neither echoed nor answered.
    private var sentClose = false
    /// What the message the engine lent last asks of the scenario, kept until the engine is unlocked.
    private var delivery: Delivery?
    /// The reason recorded when the TCP connection ends, when the server decided it.
    private var endReason: ConnectionEnd?
    /// How the stream ended, for the record once the engine has reported the end.
    private var streamEnd = ByteStreamEnd.closedLocally
    private var timers: [Int: TimerHandle] = [:]
    private var nextTimerID = 0
    /// When the connection opened: the scenario's timed actions count from it.
    private var scenarioStart = ContinuousClock.now
    private var streamSent = 0
    private var streamPayload: [UInt8] = []
    private var pingsSent: UInt64 = 0
    /// The broadcast's payload buffer (dots between messages).
    private var broadcastPayload: [UInt8] = []
    /// The delivery protocol's streams this connection subscribed to, each with the next number to send it.
    private var subscriptions: [String: UInt64] = [:]
    /// A `.feedTick` timer is armed.
    private var feedTickArmed = false
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
        case .handshake(let parser):
            self.readRequest(bytes, parser: parser, shell: shell)
        case .webSocket(let webSocket):
            webSocket.received(bytes)
        case .ignoring, .finished:
            return  // nothing more is read into the protocol
        }
    }

    func ended(_ end: ByteStreamEnd) {
        self.leaveHandshake()
        self.cancelTimers()
        self.streamEnd = end
        guard case .webSocket(let webSocket) = self.phase else {
            self.phase = .finished
            self.recordEnd()
            return
        }
        webSocket.streamEnded()  // the engine reports `ended`, which records the end
    }

    private func recordEnd() {
        let reason =
            self.endReason
            ?? {
                switch self.streamEnd {
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
        self.resetConnection()
    }

    /// Drops the connection (RST), through the engine when the WebSocket is open.
    private func resetConnection() {
        self.cancelTimers()
        guard case .webSocket(let webSocket) = self.phase else {
            self.phase = .finished
            self.connection.reset()
            return
        }
        webSocket.reset()
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
        guard self.inHandshake, case .handshake = self.phase else { return }
        self.leaveHandshake()
        self.endReason = .handshakeTimedOut
        self.phase = .finished
        self.connection.close()
    }

    /// The core makes room for a newer connection (too many in the handshake, or out of descriptors):
    /// reset at once, which frees the descriptor now.
    func dropInHandshake() {
        guard self.inHandshake, case .handshake = self.phase else { return }
        self.leaveHandshake()
        self.endReason = .handshakeDropped
        self.phase = .finished
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

    private func readRequest(_ bytes: UnsafeRawBufferPointer, parser: HandshakeRequestParser, shell: ServerConnection) {
        var parser = parser
        self.phase = .finished  // while the parser is out of the phase (it is not shared with a copy)
        parser.append(bytes)
        let request: HandshakeRequest
        do throws(HandshakeError) {
            guard let parsed = try parser.parse() else {
                self.phase = .handshake(parser)
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
        case .redirect(let status, let location):
            self.endReason = .handshakeRejected(status: status)
            self.answerAndClose(ServerHandshake.reject(
                status: status, reason: Self.reasonPhrase(status), retryAfterSeconds: nil,
                headers: [(name: "Location", value: location)]))
            self.recorder.update(self.index) { record, _ in
                record.handshake = .redirected(status: status)
                return .redirected(status: status)
            }
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
        var compression: PerMessageDeflateParameters?
        var extensionHeaders: [(name: String, value: String)] = []
        switch scenario.deflate {
        case nil:
            break
        case .accept(let policy):
            if let (parameters, answer) = PerMessageDeflate.respond(to: request.extensionElements, policy: policy) {
                compression = parameters
                extensionHeaders = [("Sec-WebSocket-Extensions", answer)]
            }
        case .answer(let answer, let parameters):
            compression = parameters
            extensionHeaders = [("Sec-WebSocket-Extensions", answer)]
        }
        let headers = extensionHeaders + scenario.responseHeaders.map { (name: $0.name, value: $0.value) }
        ServerHandshake.accept(request, subprotocol: subprotocol, headers: headers).withUnsafeBytes {
            self.connection.write(borrowing: $0, sealing: false, completion: nil)
        }
        var engine = WebSocketConnection(.init(
            role: .server, maximumMessageSize: self.core.maximumMessageSize,
            automaticPongs: scenario.pong == .immediate, outbound: self.core.outboundWatermarks,
            closeTimeoutMilliseconds: scenario.closeTimeoutMilliseconds,
            compression: compression.map { WebSocketCompression(parameters: $0) }))
        engine.bytesReceived(request.remaining)
        let webSocket = WebSocket(stream: self.connection, engine: engine, delegate: self)
        self.phase = .webSocket(webSocket)
        self.recorder.update(self.index) { record, now in
            record.handshake = .accepted(subprotocol: subprotocol)
            record.openedAt = now
            record.compression = compression
            return .opened(subprotocol: subprotocol, extensions: extensionHeaders.first?.value)
        }
        // The scenario's times (pings, stream, close, reset) count from here, no earlier than the recorded open.
        self.scenarioStart = self.core.loop.now
        if let close = scenario.close { self.schedule(.close, after: close.afterMilliseconds, shell: shell) }
        if let reset = scenario.resetAfterMilliseconds { self.schedule(.reset, after: reset, shell: shell) }
        if let interval = scenario.pingIntervalMilliseconds { self.schedule(.ping, after: interval, shell: shell) }
        if let broadcast = scenario.broadcast {
            // The first tick at or after the open: the connection joins the feed where the server is.
            let interval = Duration.milliseconds(broadcast.intervalMilliseconds)
            let next = Int((self.core.started.duration(to: self.scenarioStart) / interval).rounded(.up))
            self.schedule(.broadcast(next), at: self.core.started + interval * next, shell: shell)
        }
        if let mebibytes = scenario.deflateBombMebibytes, compression != nil {
            let bomb = DeflateBomb.payload(inflatedMebibytes: mebibytes)
            if webSocket.sendPrecompressed(.binary, deflated: bomb) {
                self.recorder.update(self.index) { record, _ in
                    record.sentMessageCount += 1
                    record.sentMessageBytes += mebibytes << 20
                    return nil
                }
            }
        }
        if let stream = scenario.stream, stream.count > 0 {
            self.streamPayload = [UInt8](repeating: UInt8(ascii: "."), count: stream.size)
            if stream.intervalMilliseconds == 0 {
                self.sendStreamBatch(webSocket, shell: shell)  // runs the engine's actions, as `start()` does
                return
            }
            self.schedule(.stream, after: 0, shell: shell)
        }
        webSocket.start()
    }

    private func reject(status: Int, retryAfterSeconds: Int?) {
        self.endReason = .handshakeRejected(status: status)
        self.answerAndClose(ServerHandshake.reject(
            status: status, reason: Self.reasonPhrase(status), retryAfterSeconds: retryAfterSeconds))
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
            case .rejected(let status, _), .redirected(let status, _): "unexpected status \(status)"
            }
        self.endReason = .handshakeRejected(status: 400)
        self.answerAndClose(ServerHandshake.reject(status: 400, reason: "Bad Request"))
        self.recorder.update(self.index) { record, _ in
            record.handshake = .invalid(reason: reason)
            return .badUpgrade(reason: reason)
        }
    }

    /// Writes the handshake's answer, then closes TCP (after it is flushed).
    private func answerAndClose(_ answer: [UInt8]) {
        self.phase = .finished
        self.cancelTimers()
        self.connection.write(answer, sealing: true, completion: nil)
        self.connection.close()
    }

    static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 301: "Moved Permanently"
        case 302: "Found"
        case 303: "See Other"
        case 307: "Temporary Redirect"
        case 308: "Permanent Redirect"
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

    // MARK: Messages (the engine's delegate)

    /// Records one message the engine lends; the engine is locked, so nothing here touches it.
    func received(_ message: BorrowedMessage) -> Bool {
        self.delivery = self.receivedDelivery(message)
        return self.delivery != nil
    }

    private func receivedDelivery(_ message: BorrowedMessage) -> Delivery? {
        switch message.opcode {
        case .text, .binary:
            let kind: Scenario.MessageKind = message.opcode == .text ? .text : .binary
            let size = message.payload.count
            let recordsPayload = self.scenario.recordsPayloads
            let compressed = message.reservedBits & 0b100 != 0  // RSV1: permessage-deflate
            let command = self.scenario.delivery == nil || kind != .text
                ? nil : Scenario.DeliveryProtocol.Command(message.payload)
            let echoes = self.scenario.echo && !self.sentClose && command == nil
            self.recorder.update(self.index) { record, now in
                record.messageCount += 1
                record.messageBytes += size
                // Kept up to the record limit; the payload is copied only when kept.
                record.messages.append(MessageRecord(
                    at: now, kind: kind, size: size, payload: recordsPayload ? Array(message.payload) : nil,
                    compressed: compressed))
                if echoes {
                    record.sentMessageCount += 1
                    record.sentMessageBytes += size
                }
                return .message(kind, bytes: size)
            }
            if let command, !self.sentClose { return .command(command) }
            return echoes ? .echo : nil
        case .ping:
            let payload = Array(message.payload)
            self.recorder.update(self.index) { record, now in
                record.pingsReceived.append(ControlFrameRecord(at: now, payload: payload))
                return .pingReceived(bytes: payload.count)
            }
            // An immediate pong is the engine's; a delayed one is the scenario's, while open.
            guard case .delayed = self.scenario.pong, !self.sentClose else { return nil }
            return .pongLater(payload)
        case .pong:
            let payload = Array(message.payload)
            self.recorder.update(self.index) { record, now in
                record.pongsReceived.append(ControlFrameRecord(at: now, payload: payload))
                return .pongReceived(bytes: payload.count)
            }
            return nil
        default:
            preconditionFailure("the engine lends only text, binary, ping and pong frames")
        }
    }

    func deliverReceived() {
        guard let delivery = self.delivery else { return }
        self.delivery = nil
        guard case .webSocket(let webSocket) = self.phase, let shell = self.shell else { return }
        switch delivery {
        case .echo:
            webSocket.echoLastMessage()
        case .pongLater(let payload):
            guard case .delayed(let milliseconds) = self.scenario.pong else { return }
            self.schedule(.pong(payload), after: milliseconds, shell: shell)
        case .command(let command):
            self.handle(command, webSocket: webSocket, shell: shell)
        }
    }

    func pongReceived(id: UInt64) {}  // the server's pings are not tracked by id: every pong is recorded

    func pongSent(payload: [UInt8]) {
        self.recordPongSent(payload)
    }

    func closed(_ closure: WebSocketClosure) {
        self.cancelTimers()  // nothing more is sent; the engine bounds the final flush with the close timeout
        switch closure {
        case .byPeer(let code, let reason):
            self.recordCloseReceived(code: code, reason: reason)
            self.recordCloseSent(code: code, reason: "")  // the engine echoed the code (RFC 6455 §5.5.1)
            self.endReason = self.endReason ?? .closeHandshakeCompleted(initiatedByServer: false)
        case .byUs(_, let code, let reason):
            self.recordCloseReceived(code: code, reason: reason)
            self.endReason = self.endReason ?? .closeHandshakeCompleted(initiatedByServer: true)
        case .violation(let error, let sentClose):
            if sentClose { self.recordCloseSent(code: error.closeCode, reason: error.reason) }
            self.endReason = self.endReason ?? .protocolError(code: error.closeCode)
        }
    }

    func ended(_ ending: WebSocketEnding, failedPings: [UInt64]) {
        self.phase = .finished
        if ending == .closeTimedOut { self.endReason = self.endReason ?? .closeTimedOut }
        self.recordEnd()
    }

    func flow(_ event: WebSocketFlowEvent) {
        switch event {
        case .written:
            break
        case .pausedForWriteRoom(let queued):
            self.recorder.update(self.index) { _, _ in .readingPaused(queuedBytes: queued) }
        case .resumedAfterWriteRoom:
            self.recorder.update(self.index) { _, _ in .readingResumed }
        }
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

    private func sendStreamBatch(_ webSocket: WebSocket, shell: ServerConnection) {
        guard !self.sentClose, let stream = self.scenario.stream else { return }
        var sent = 0
        webSocket.sendBatch { send in
            var refused = false
            var encoded = 0
            while self.streamSent + sent < stream.count, encoded < Self.streamBatchBytes {
                guard let total = self.encodeStreamMessage(stream, number: self.streamSent + sent, with: send) else {
                    refused = true
                    break
                }
                encoded = total
                sent += 1
            }
            guard self.streamSent + sent < stream.count, !refused else { return nil }
            // The next batch goes out once this one is in the kernel: reads (and pongs) run in between.
            return { result in
                guard case .success = result else { return }
                shell.driver.value.continueStream(shell: shell)
            }
        }
        self.recordStreamed(sent, of: stream)  // once the engine is unlocked
    }

    private func continueStream(shell: ServerConnection) {
        guard case .webSocket(let webSocket) = self.phase else { return }
        self.sendStreamBatch(webSocket, shell: shell)
    }

    /// Encodes message `number` of the stream (its number in digits, then dots) with a batch's `send`: the batch's
    /// size so far, or nil when the connection no longer sends.
    private func encodeStreamMessage(
        _ stream: Scenario.Stream, number: Int, with send: (Opcode, UnsafeRawBufferPointer) -> Int?
    ) -> Int? {
        Self.encodeNumbered(number, kind: stream.kind, cut: true, payload: &self.streamPayload, with: send)
    }

    /// Encodes `number`'s digits over `payload` (all dots), sends it as `kind` with a batch's `send` and puts the
    /// dots back; the digits are cut to the payload's size when `cut`, else the payload grows to hold them. Returns
    /// what `send` did: the batch's size so far, or nil when the connection no longer sends.
    private static func encodeNumbered(
        _ number: Int, kind: Scenario.MessageKind, cut: Bool, payload: inout [UInt8],
        with send: (Opcode, UnsafeRawBufferPointer) -> Int?
    ) -> Int? {
        let digits = Array(String(number).utf8)
        if !cut, payload.count < digits.count {
            payload.append(contentsOf: repeatElement(UInt8(ascii: "."), count: digits.count - payload.count))
        }
        let written = min(digits.count, payload.count)
        payload.replaceSubrange(0..<written, with: digits.prefix(written))
        let sent = payload.withUnsafeBytes { send(kind == .text ? .text : .binary, $0) }
        payload.replaceSubrange(0..<written, with: repeatElement(UInt8(ascii: "."), count: written))
        return sent
    }

    /// Records `count` more streamed messages, and the stream's end once all are out.
    private func recordStreamed(_ count: Int, of stream: Scenario.Stream) {
        guard count > 0 else { return }
        self.streamSent += count
        self.recorder.update(self.index) { record, _ in
            record.sentMessageCount += count
            record.sentMessageBytes += count * stream.size
            return nil
        }
        guard self.streamSent == stream.count else { return }
        self.streamPayload = []
        self.recorder.update(self.index) { _, _ in .streamFinished(count: stream.count) }
    }

    private func sendPing(_ webSocket: WebSocket) {
        self.pingsSent += 1
        let payload = (0..<8).reversed().map { UInt8(truncatingIfNeeded: self.pingsSent >> (UInt64($0) * 8)) }
        // An 8-byte payload always fits a ping.
        guard (try? webSocket.ping(payload)) == true else { return }
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
        if case .reset = action {
            self.endReason = self.endReason ?? .serverReset
            self.resetConnection()
            return
        }
        guard case .webSocket(let webSocket) = self.phase, !self.sentClose else { return }
        switch action {
        case .pong(let payload):
            // A ping's payload is at most 125 bytes (the engine checks), so the pong cannot fail.
            if (try? webSocket.pong(payload)) == true { self.recordPongSent(payload) }
        case .close:
            guard let close = self.scenario.close else { return }
            // Codes come from a validated scenario. The engine arms the close timeout once the frame is written.
            guard webSocket.close(code: close.code, reason: close.reason) else { return }
            self.sentClose = true
            self.recordCloseSent(code: close.code, reason: close.reason)
            self.cancelTimers()
            if let reset = self.scenario.resetAfterMilliseconds, reset > close.afterMilliseconds {
                self.schedule(.reset, at: self.scenarioStart + .milliseconds(reset), shell: shell)
            }
        case .stream:
            guard let stream = self.scenario.stream else { return }
            var sent = false
            webSocket.sendBatch { send in
                sent = self.encodeStreamMessage(stream, number: self.streamSent, with: send) != nil
                return nil
            }
            self.recordStreamed(sent ? 1 : 0, of: stream)
            if sent, self.streamSent < stream.count {
                let next = self.scenarioStart + .milliseconds(self.streamSent * stream.intervalMilliseconds)
                self.schedule(.stream, at: next, shell: shell)
            }
        case .ping:
            guard let interval = self.scenario.pingIntervalMilliseconds else { return }
            self.sendPing(webSocket)
            let next = self.scenarioStart + .milliseconds(Int(self.pingsSent + 1) * interval)
            self.schedule(.ping, at: next, shell: shell)
        case .broadcast(let number):
            guard let broadcast = self.scenario.broadcast else { return }
            if self.broadcastPayload.count != broadcast.size {
                self.broadcastPayload = [UInt8](repeating: UInt8(ascii: "."), count: broadcast.size)
            }
            var sent = false
            webSocket.sendBatch { send in
                sent = Self.encodeNumbered(
                    number, kind: .text, cut: false, payload: &self.broadcastPayload, with: send) != nil
                return nil
            }
            guard sent else { break }
            let size = self.broadcastPayload.count
            self.recorder.update(self.index) { record, _ in
                record.sentMessageCount += 1
                record.sentMessageBytes += size
                return nil
            }
            let next = self.core.started + .milliseconds(broadcast.intervalMilliseconds) * (number + 1)
            self.schedule(.broadcast(number + 1), at: next, shell: shell)
        case .feedTick:
            self.feedTickArmed = false
            guard let delivery = self.scenario.delivery else { return }
            let current = self.currentFeedNumber(delivery)
            self.sendFeeds(upTo: current, webSocket)
            self.armFeedTick(after: current, delivery, shell: shell)
        case .reset:
            preconditionFailure("handled above")
        }
    }

    // MARK: The delivery protocol

    /// A client's message of the delivery protocol: take and acknowledge a send, or subscribe to a stream (sending at
    /// once what it asks to resume).
    private func handle(_ command: Scenario.DeliveryProtocol.Command, webSocket: WebSocket, shell: ServerConnection) {
        guard let delivery = self.scenario.delivery else { return }
        switch command {
        case .send(let id):
            let taken = self.core.delivery.withLock { $0.take(id) }
            self.recorder.update(self.index) { _, _ in .sendReceived(id: id, repeated: !taken) }
            guard delivery.acknowledges else { return }
            if self.sendTexts([Array("ack \(id)".utf8)], webSocket) > 0 {
                self.core.delivery.withLock { $0.acknowledged() }
            }
        case .subscribe(let stream, let after):
            guard delivery.streams.contains(stream) else { return }
            self.recorder.update(self.index) { _, _ in .subscribed(stream: stream, after: after) }
            let current = self.currentFeedNumber(delivery)
            let retained = UInt64(delivery.retained)
            let oldest = current >= retained ? current - retained + 1 : 1
            // After the last number delivered, but not before the oldest still retained: what is older is a gap.
            let first = after.map { $0 == .max ? $0 : max($0 + 1, oldest) } ?? current + 1
            self.subscriptions[stream] = first
            self.sendFeeds(upTo: current, webSocket)
            self.armFeedTick(after: current, delivery, shell: shell)
        }
    }

    /// The latest number every stream has published by now (0 before the first).
    private func currentFeedNumber(_ delivery: Scenario.DeliveryProtocol) -> UInt64 {
        let elapsed = self.core.started.duration(to: self.core.loop.now)
        guard elapsed > .zero else { return 0 }
        return UInt64(elapsed / Duration.milliseconds(delivery.intervalMilliseconds))
    }

    /// Sends each subscribed stream its numbers up to `current` that it has not had yet, in one batch.
    private func sendFeeds(upTo current: UInt64, _ webSocket: WebSocket) {
        var texts: [[UInt8]] = []
        for (stream, next) in self.subscriptions where next <= current {
            texts += (next...current).map { Scenario.DeliveryProtocol.feedMessage(stream: stream, sequence: $0) }
            self.subscriptions[stream] = current + 1
        }
        guard !texts.isEmpty else { return }
        _ = self.sendTexts(texts, webSocket)
    }

    /// Sends `texts` as text messages in one batch of the engine, in order, and records what it sent; returns how
    /// many it sent (fewer once the connection no longer sends).
    private func sendTexts(_ texts: [[UInt8]], _ webSocket: WebSocket) -> Int {
        var count = 0
        var bytes = 0
        webSocket.sendBatch { send in
            for text in texts {
                guard text.withUnsafeBytes({ send(.text, $0) }) != nil else { break }
                count += 1
                bytes += text.count
            }
            return nil
        }
        guard count > 0 else { return 0 }
        self.recorder.update(self.index) { [bytes] record, _ in
            record.sentMessageCount += count
            record.sentMessageBytes += bytes
            return nil
        }
        return count
    }

    /// Arms the timer of the next number after `current`, unless one is armed or nothing is subscribed.
    private func armFeedTick(after current: UInt64, _ delivery: Scenario.DeliveryProtocol, shell: ServerConnection) {
        guard !self.feedTickArmed, !self.subscriptions.isEmpty else { return }
        self.feedTickArmed = true
        let next = current + 1
        let at = self.core.started + .milliseconds(delivery.intervalMilliseconds) * Int(next)
        self.schedule(.feedTick(next), at: at, shell: shell)
    }

    private func cancelTimers() {
        for timer in self.timers.values { timer.cancel() }
        self.timers.removeAll()
    }
}

extension ConnectionDriver: WebSocketDriverDelegate {}
#endif
