#if os(Linux)
import Foundation
import Synchronization
import TetherCore
import TetherPOSIX
import TetherWire

/// The protocol state of one `SocketConnection`. Used only on its event loop's thread (it lives in a
/// `LoopBound`); see `SocketConnection` for why that is safe.
///
/// Phases: `connecting` (resolving, then TCP connect, in a task) → `handshaking` → `open` → `closing` (our close
/// frame is out, reading until the peer's close frame or end of stream). Once the end is decided while the TCP
/// connection (or the connect task) still has to let go, the phase is `finishing` with the end in `decidedEnd`;
/// `finish` reports it when the TCP connection has ended, so `.ended` comes after its descriptor was closed.
final class SocketConnectionCore: TCPConnectionHandler {
    private enum Phase {
        /// Not started: the request was unsupported.
        case idle
        case connecting
        case handshaking
        case open
        case closing
        case finishing
        case ended
    }

    private let outlet: EventOutlet
    private let loop: EventLoop
    private let connectTimeout: Int
    private let closeTimeout: Int
    /// Where the TCP sockets are created (nil: the process's namespace).
    private let namespace: NetworkNamespace?
    private var phase = Phase.idle
    /// Set while `finishing`: the end to report once the TCP connection or the connect task has let go.
    private var decidedEnd: TransportEnd?
    /// The wrapper holding this core, for timer and task callbacks. Set while running (a deliberate cycle),
    /// cleared by `finish`.
    private var bound: LoopBound<SocketConnectionCore>?
    private var tcp: TCPConnection?
    private var connectTask: Task<Void, Never>?
    private let connectProgress = ConnectProgress()
    private var connectTimer: TimerHandle?
    private var closeTimer: TimerHandle?
    private var parser: HandshakeResponseParser?
    private var decoder: WebSocketDecoder
    /// Encodes control frames (pong, close) on the loop; data messages and pings are encoded by the caller.
    private var encoder = WebSocketEncoder(role: .client, random: MaskingEntropy())
    /// Reused for control frames, so that answering a ping allocates nothing.
    private var controlFrame: [UInt8] = []
    /// The open TCP connection and the outstanding pings, shared with the sending side.
    private let wire: OpenWire
    /// True from our close frame's write until the kernel has taken all of it (or the write failed).
    private var closeFramePending = false
    /// Callers of `waitUntilCloseSent` waiting for `closeFramePending` to clear.
    private var closeSentWaiters: [CheckedContinuation<Void, Never>] = []

    init(
        request: TransportRequest, outlet: EventOutlet, loop: EventLoop,
        wire: OpenWire, namespace: NetworkNamespace? = nil
    ) {
        self.outlet = outlet
        self.wire = wire
        self.loop = loop
        self.namespace = namespace
        self.connectTimeout = request.connectTimeout
        self.closeTimeout = request.closeTimeout
        // One frame may carry a whole message, so the frame limit follows the message limit.
        let limit = max(0, request.maximumMessageSize)
        self.decoder = WebSocketDecoder(role: .client, maximumFrameSize: max(125, limit), maximumMessageSize: limit)
        self.controlFrame.reserveCapacity(2 + 4 + 125)
    }

    // MARK: - Connecting

    /// Starts resolving and connecting; one deadline covers resolution, TCP connect and the handshake.
    func start(_ endpoint: SocketEndpoint, bound: LoopBound<SocketConnectionCore>) {
        guard case .idle = self.phase else { return }
        self.phase = .connecting
        self.bound = bound
        self.parser = HandshakeResponseParser(handshake: endpoint.handshake)
        let deadline = ContinuousClock.now + .milliseconds(self.connectTimeout)
        self.connectTimer = self.loop.schedule(at: deadline) { bound.value.connectTimedOut() }
        let loop = self.loop
        let progress = self.connectProgress
        let namespace = self.namespace
        self.connectTask = Task {
            let result: Result<TCPConnection, SocketError>
            do throws(SocketError) {
                // `Resolver` runs getaddrinfo on its own threads; this task only waits.
                let addresses = try await Resolver.resolve(host: endpoint.host, port: endpoint.port)
                guard progress.beginConnecting() else { return }  // abandoned while resolving: nothing to close
                let remaining = max(ContinuousClock.now.duration(to: deadline), .zero)
                result = .success(try await TCPConnection.connect(
                    to: addresses, timeout: remaining, loop: loop, namespace: namespace
                ))
            } catch {
                result = .failure(error)
            }
            if !loop.execute({ bound.value.connectFinished(result) }), case .success(let tcp) = result {
                tcp.reset()
            }
        }
    }

    private func connectFinished(_ result: Result<TCPConnection, SocketError>) {
        self.connectTask = nil
        switch (self.phase, result) {
        case (.connecting, .failure(let error)):
            self.finish(.connectFailed(Self.connectFailure(for: error)))
        case (.connecting, .success(let tcp)):
            self.tcp = tcp
            self.phase = .handshaking
            tcp.setHandler(self)
            // A failed write ends the TCP connection, which `ended` reports.
            tcp.write(self.parser!.handshake.request)
        case (.finishing, _):
            // Abandoned (timeout or `close`) while the TCP connect was in flight: the connect was cancelled,
            // or won the race; either way no descriptor is left open when the end is reported.
            if case .success(let tcp) = result { tcp.reset() }
            self.finish(self.decidedEnd!)
        case (.ended, _):
            // Abandoned while resolving and reported at once; resolution then failed (a success stops earlier).
            if case .success(let tcp) = result { tcp.reset() }
        case (.idle, _), (.handshaking, _), (.open, _), (.closing, _):
            preconditionFailure("the connect task reports once, while connecting")
        }
    }

    private func connectTimedOut() {
        switch self.phase {
        case .connecting:
            self.abandonConnect(.connectFailed(.timedOut))
        case .handshaking:
            self.decide(.connectFailed(.timedOut), graceful: false)
        case .idle, .open, .closing, .finishing, .ended:
            break  // the timer lost a race with the opening or the end
        }
    }

    /// Gives up while resolving or connecting. A TCP connect in flight is cancelled and awaited, so that its
    /// socket is closed before the end is reported; a resolution (which cannot be interrupted) is not awaited.
    private func abandonConnect(_ end: TransportEnd) {
        let connecting = self.connectProgress.abandon()
        self.connectTask?.cancel()
        if connecting {
            self.decidedEnd = end
            self.phase = .finishing
            self.connectTimer?.cancel()
        } else {
            self.finish(end)
        }
    }

    private func handshakeCompleted(_ response: HandshakeResponse) {
        self.connectTimer?.cancel()
        self.connectTimer = nil
        self.parser = nil
        self.phase = .open
        if let tcp = self.tcp { self.wire.open(tcp) }
        self.outlet.emit(.opened(subprotocol: response.subprotocol))
        if !response.remaining.isEmpty {
            response.remaining.withUnsafeBytes { self.decoder.append($0) }
            self.processFrames()
        }
    }

    private func handshakeFailed(_ error: HandshakeError) {
        switch error {
        case .rejected(let status, let retryAfter):
            let delay = retryAfter?.millisecondsFromNow
            self.decide(.handshakeRejected(status: status, retryAfter: delay), graceful: true)
        case .headerTooLarge, .malformed, .invalidUpgrade:
            // The parsers' details are fixed texts, never a header value: safe for the close record and logs.
            self.decide(.handshakeInvalid(detail: error.detail), graceful: true)
        }
    }

    // MARK: - Calls from the connection's owner

    func close(code: UInt16, reason: String) {
        switch self.phase {
        case .connecting:
            self.abandonConnect(.closedLocally)
        case .handshaking:
            self.decide(.closedLocally, graceful: false)
        case .open:
            let code = CloseCode.isValidOnWire(code) ? code : 1000
            self.writeClose(code: code, reason: Self.truncated(reason, toUTF8Count: 123), tracked: true)
            self.phase = .closing
            self.armCloseTimer()
        case .idle, .closing, .finishing, .ended:
            break  // nothing to close, or already closing
        }
    }

    func waitUntilCloseSent(_ continuation: CheckedContinuation<Void, Never>) {
        guard self.closeFramePending else {
            continuation.resume()
            return
        }
        self.closeSentWaiters.append(continuation)
    }

    private func closeFrameWritten() {
        self.closeFramePending = false
        let waiters = self.closeSentWaiters
        self.closeSentWaiters.removeAll()
        for waiter in waiters {
            waiter.resume()
        }
    }

    // MARK: - TCPConnectionHandler

    func received(_ bytes: UnsafeRawBufferPointer, on connection: TCPConnection) {
        switch self.phase {
        case .handshaking:
            self.parser!.append(bytes)
            do throws(HandshakeError) {
                guard let response = try self.parser!.parse() else { return }
                self.handshakeCompleted(response)
            } catch {
                self.handshakeFailed(error)
            }
        case .open, .closing:
            self.decoder.append(bytes)
            self.processFrames()
        case .idle, .connecting, .finishing, .ended:
            break  // no reads before the handshake is sent; none after the end is decided
        }
    }

    func ended(_ end: TCPConnection.End, on connection: TCPConnection) {
        self.tcp = nil
        self.wire.closeForSending()  // from now on `send` and `sendPing` fail at once
        if case .endOfStream = end, let bound = self.bound {
            // The descriptor is closed right after this call returns (or once our last bytes are flushed):
            // report the end on the next turn so that no descriptor is open when `.ended` arrives.
            self.loop.execute { bound.value.tcpEnded() }
        } else {
            self.tcpEnded()
        }
    }

    private func tcpEnded() {
        switch self.phase {
        case .finishing:
            self.finish(self.decidedEnd!)
        case .handshaking, .open:
            // Reset or end of stream without a close frame (during the handshake too: the server hung up).
            self.finish(.receiveFailed)
        case .closing:
            self.finish(.closedLocally)
        case .idle, .connecting, .ended:
            preconditionFailure("the TCP connection exists only from handshaking until the end is reported")
        }
    }

    // MARK: - Frames

    /// Hands every complete message in the decoder to `handle`, until more bytes are needed, the peer's close
    /// frame arrived, or the peer broke the protocol (after all messages before the violation).
    private func processFrames() {
        while true {
            switch self.phase {
            case .open, .closing: break
            case .idle, .connecting, .handshaking, .finishing, .ended: return
            }
            do throws(ProtocolError) {
                guard try self.decoder.nextMessage({ self.handle($0) }) != nil else { return }
            } catch {
                self.protocolViolated(error)
                return
            }
        }
    }

    private func handle(_ message: BorrowedMessage) {
        switch message.opcode {
        case .text:
            self.outlet.emit(.message(.text(String(decoding: message.payload, as: UTF8.self))))
        case .binary:
            let payload = message.payload
            let data = payload.baseAddress.map { Data(bytes: $0, count: payload.count) } ?? Data()
            self.outlet.emit(.message(.binary(data)))
        case .ping:
            guard case .open = self.phase else { return }  // after our close frame, nothing more is sent
            self.controlFrame.removeAll(keepingCapacity: true)
            self.encodeControl { (encoder, frame) throws(WireUsageError) in
                try encoder.pong(message.payload, into: &frame)
            }
            self.writeControlFrame()
        case .pong:
            guard message.payload.count == 8 else { return }  // not one of ours
            let id = message.payload.loadUnaligned(as: UInt64.self).bigEndian
            guard self.wire.forgetPing(id) else { return }  // unsolicited or repeated
            self.outlet.emit(.pong(id: id))
        case .close:
            self.peerClosed(code: message.closeCode)
        default:
            break  // the decoder lends only whole messages and control frames
        }
    }

    private func peerClosed(code: UInt16?) {
        switch self.phase {
        case .open:
            // RFC 6455 §5.5.1: answer with a close frame, echoing the status code (none if there was none).
            self.writeClose(code: code, reason: "")
            self.decide(.peerClosed(code: code), graceful: true)
        case .closing:
            self.decide(.closedLocally, graceful: true)
        case .idle, .connecting, .handshaking, .finishing, .ended:
            preconditionFailure("frames are decoded only while open or closing")
        }
    }

    private func protocolViolated(_ error: ProtocolError) {
        switch self.phase {
        case .open:
            self.writeClose(code: error.closeCode, reason: error.reason)
            self.decide(.protocolViolation(code: error.closeCode), graceful: true)
        case .closing:
            self.decide(.closedLocally, graceful: true)  // our close frame is already out; just drop TCP
        case .idle, .connecting, .handshaking, .finishing, .ended:
            preconditionFailure("frames are decoded only while open or closing")
        }
    }

    // MARK: - Ending

    /// Decides the end and lets go of TCP: `graceful` flushes what is queued (a close frame) and sends FIN,
    /// guarded by the close timeout; otherwise the connection is reset. `finish` follows when TCP has ended.
    private func decide(_ end: TransportEnd, graceful: Bool) {
        self.decidedEnd = end
        self.phase = .finishing
        self.connectTimer?.cancel()
        if graceful {
            self.tcp?.close()
            self.armCloseTimer()
        } else {
            self.tcp?.reset()
        }
    }

    private func armCloseTimer() {
        self.closeTimer?.cancel()
        guard let bound = self.bound else { return }
        self.closeTimer = self.loop.schedule(afterMilliseconds: self.closeTimeout) { bound.value.closeTimedOut() }
    }

    private func closeTimedOut() {
        switch self.phase {
        case .closing:
            self.decide(.closedLocally, graceful: false)  // the peer never answered our close frame
        case .finishing:
            self.tcp?.reset()  // the flush of our last bytes stalled (the peer does not read)
        case .idle, .connecting, .handshaking, .open, .ended:
            break  // the timer lost a race with the end
        }
    }

    /// Reports the end: pings still outstanding fail first, then exactly one `.ended`, then the stream finishes.
    private func finish(_ end: TransportEnd) {
        guard self.phase != .ended else { return }
        self.phase = .ended
        self.decidedEnd = nil
        self.connectTimer?.cancel()
        self.closeTimer?.cancel()
        self.connectTimer = nil
        self.closeTimer = nil
        for id in self.wire.end() {
            self.outlet.emit(.pingFailed(id: id))
        }
        self.outlet.emit(.ended(end))
        self.outlet.finish()
        self.closeFrameWritten()  // no write completion can come any more
        self.bound = nil
        self.tcp = nil
        self.parser = nil
        self.decoder = WebSocketDecoder(role: .client, maximumFrameSize: 125, maximumMessageSize: 0)  // frees buffers
    }

    // MARK: - Writing control frames

    /// Writes our close frame as the TCP connection's sealing write: no data frame or ping sent from another thread
    /// can follow it on the wire.
    /// - Parameter tracked: the close frame counts as pending for `waitUntilCloseSent` until the kernel has taken
    ///   all of it or the write failed (either way nothing is pending any more).
    private func writeClose(code: UInt16?, reason: String, tracked: Bool = false) {
        self.wire.closeForSending()
        self.controlFrame.removeAll(keepingCapacity: true)
        self.encodeControl { (encoder, frame) throws(WireUsageError) in
            try encoder.close(code: code, reason: reason, into: &frame)
        }
        guard tracked, let tcp = self.tcp, let bound = self.bound else {
            self.writeControlFrame(sealing: true)
            return
        }
        self.closeFramePending = true
        self.controlFrame.withUnsafeBytes { bytes in
            tcp.write(borrowing: bytes, sealing: true) { _ in bound.value.closeFrameWritten() }
        }
    }

    /// Runs an encoding that cannot fail for the values this type passes (payloads within 125 bytes, close codes
    /// valid on the wire).
    private func encodeControl(
        _ body: (inout WebSocketEncoder<MaskingEntropy>, inout [UInt8]) throws(WireUsageError) -> Void
    ) {
        do {
            try body(&self.encoder, &self.controlFrame)
        } catch {
            preconditionFailure("control frame rejected by the encoder: \(error)")
        }
    }

    /// Writes `controlFrame`; only what the kernel does not take at once is copied. A failure ends the TCP
    /// connection, which `ended` reports.
    private func writeControlFrame(sealing: Bool = false) {
        guard let tcp = self.tcp else { return }
        self.controlFrame.withUnsafeBytes { tcp.write(borrowing: $0, sealing: sealing) }
    }

    // MARK: - Helpers

    static func connectFailure(for error: SocketError) -> ConnectFailure {
        switch error {
        case .refused: .refused
        case .unreachable: .unreachable
        case .timedOut: .timedOut
        case .nameResolution: .nameResolution
        case .reset: .system(ECONNRESET)
        case .brokenPipe: .system(EPIPE)
        case .closed: .system(EBADF)
        case .addressInUse: .system(EADDRINUSE)
        case .cancelled: .system(ECANCELED)
        case .system(_, let code): .system(code)
        }
    }

    /// `text` cut at a character boundary so that its UTF-8 form has at most `limit` bytes.
    static func truncated(_ text: String, toUTF8Count limit: Int) -> String {
        guard text.utf8.count > limit else { return text }
        var count = 0
        var result = ""
        for character in text {
            count += character.utf8.count
            guard count <= limit else { break }
            result.append(character)
        }
        return result
    }
}

/// Whether the connect task may still open a socket. Shared between the task and the loop.
private final class ConnectProgress: Sendable {
    private struct State {
        var abandoned = false
        var connecting = false
    }

    private let state = Mutex(State())

    /// Called by the task after resolution: `false` if the attempt was abandoned meanwhile.
    func beginConnecting() -> Bool {
        self.state.withLock { state in
            guard !state.abandoned else { return false }
            state.connecting = true
            return true
        }
    }

    /// Called on the loop when giving up: returns whether a TCP connect is (or was) in flight.
    func abandon() -> Bool {
        self.state.withLock { state in
            state.abandoned = true
            return state.connecting
        }
    }
}
#endif
