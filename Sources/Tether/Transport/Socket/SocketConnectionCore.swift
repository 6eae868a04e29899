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
///
/// From the handshake on, the WebSocket rules (pongs, the close echo, violations to close codes) are the shared
/// engine's, `WebSocketConnection`; this type is the I/O around it. Reading stops while the client holds it (its
/// consumer is behind, `holdReading`) and while the bytes we owe the peer (pongs, the close frame) fill the write
/// queue above its high watermark, until it is back at the low one: a peer that floods pings and never reads gets
/// no more of our attention than the queue allows.
final class SocketConnectionCore: ByteStreamHandler {
    private enum Phase {
        /// Not started: the request was unsupported.
        case idle
        case connecting
        /// Connected to a proxy (HTTP or SOCKS5); the tunnel is being opened.
        case tunneling
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
    /// Where the TCP sockets are created, which hosts file names are looked up in, how addresses are raced.
    private let dialer: SocketDialer
    private var phase = Phase.idle
    /// Set while `finishing`: the end to report once the TCP connection or the connect task has let go.
    private var decidedEnd: TransportEnd?
    /// The wrapper holding this core, for timer and task callbacks. Set while running (a deliberate cycle),
    /// cleared by `finish`.
    private var bound: LoopBound<SocketConnectionCore>?
    /// The TCP connection, or TLS over it, from the TCP connect until its end.
    private var stream: (any ByteStream)?
    /// The `wss://` endpoint's TLS context (nil for `ws://`).
    private var tlsContext: TLSContext?
    /// The host TLS verifies and names in SNI.
    private var serverName = ""
    /// How TLS failed, when the stream ended for that.
    private var tlsFailure: TLSFailure?
    /// The proxy to tunnel through, if any.
    private var proxy: SocketProxy?
    /// Opens the tunnel through the proxy while tunneling.
    private var tunnel: ProxyTunnel?
    /// The origin's port, for CONNECT.
    private var originPort = 0
    private var connectTask: Task<Void, Never>?
    private let connectProgress = ConnectProgress()
    private var connectTimer: TimerHandle?
    private var closeTimer: TimerHandle?
    private var parser: HandshakeResponseParser?
    /// The WebSocket engine, from the handshake's completion until the end. It encodes what we owe the peer (pongs,
    /// the close frame); data messages and pings are encoded by the caller and written directly.
    private var connection: WebSocketConnection<MaskingEntropy>?
    private let maximumMessageSize: Int
    /// The write queue's levels: above `high`, reading stops until the queue is down to `low`.
    private let outbound: Watermarks
    /// The client holds reading: its consumer is behind (`holdReading`).
    private var inboundHeld = false
    /// Reading stopped until the write queue is down to its low watermark.
    private var waitingForWriteRoom = false
    /// Whether reading is paused on the TCP connection now.
    private var readingPaused = false
    /// `processFrames` is handing out events (it is not re-entered).
    private var processingFrames = false
    /// Told when flow control acts (tests watch the bounds with it).
    private let flowObserver: (@Sendable (FlowObservation) -> Void)?
    /// The open TCP connection and the outstanding pings, shared with the sending side.
    private let wire: OpenWire
    /// True from our close frame's write until the kernel has taken all of it (or the write failed).
    private var closeFramePending = false
    /// Callers of `waitUntilCloseSent` waiting for `closeFramePending` to clear.
    private var closeSentWaiters: [CheckedContinuation<Void, Never>] = []

    init(
        request: TransportRequest, outlet: EventOutlet, loop: EventLoop,
        wire: OpenWire, dialer: SocketDialer = .direct, flowObserver: (@Sendable (FlowObservation) -> Void)? = nil
    ) {
        self.flowObserver = flowObserver
        self.outlet = outlet
        self.wire = wire
        self.loop = loop
        self.dialer = dialer
        self.connectTimeout = request.connectTimeout
        self.closeTimeout = request.closeTimeout
        self.maximumMessageSize = request.maximumMessageSize
        self.outbound = request.outboundWatermarks
    }

    // MARK: - Connecting

    /// Starts resolving and connecting; one deadline covers resolution, TCP connect and the handshake.
    func start(_ endpoint: SocketEndpoint, bound: LoopBound<SocketConnectionCore>) {
        guard case .idle = self.phase else { return }
        self.phase = .connecting
        self.bound = bound
        self.parser = HandshakeResponseParser(handshake: endpoint.handshake)
        self.tlsContext = endpoint.tls
        self.serverName = endpoint.host
        self.proxy = endpoint.proxy
        self.originPort = endpoint.port
        let deadline = ContinuousClock.now + .milliseconds(self.connectTimeout)
        self.connectTimer = self.loop.schedule(at: deadline) { bound.value.connectTimedOut() }
        let loop = self.loop
        let progress = self.connectProgress
        let dialer = self.dialer
        self.connectTask = Task {
            let result: Result<TCPConnection, SocketError>
            var originAddress: SocketAddress?
            do throws(SocketError) {
                if endpoint.proxy?.needsOriginAddress == true {  // socks5://: the client resolves the origin
                    originAddress = try await Resolver.resolve(
                        host: endpoint.host, port: endpoint.port, hostsFile: dialer.hostsFile).first
                }
                // `Resolver` runs getaddrinfo on its own threads; this task only waits.
                let addresses = try await Resolver.resolve(
                    host: endpoint.connectHost, port: endpoint.connectPort, hostsFile: dialer.hostsFile)
                guard progress.beginConnecting() else { return }  // abandoned while resolving: nothing to close
                let remaining = max(ContinuousClock.now.duration(to: deadline), .zero)
                result = .success(try await TCPConnection.connect(
                    to: addresses, timeout: remaining, attemptDelay: dialer.attemptDelay, loop: loop,
                    namespace: dialer.namespace
                ))
            } catch {
                result = .failure(error)
            }
            let origin = originAddress
            if !loop.execute({ bound.value.connectFinished(result, originAddress: origin) }),
                case .success(let tcp) = result
            {
                tcp.reset()
            }
        }
    }

    private func connectFinished(_ result: Result<TCPConnection, SocketError>, originAddress: SocketAddress?) {
        self.connectTask = nil
        switch (self.phase, result) {
        case (.connecting, .failure(let error)):
            let failure = Self.connectFailure(for: error)
            self.finish(self.proxy == nil ? .connectFailed(failure) : .proxyUnreachable(failure))
        case (.connecting, .success(let tcp)):
            if let proxy = self.proxy {
                let tunnel: ProxyTunnel
                do throws(SOCKS5Error) {
                    tunnel = try ProxyTunnel(
                        proxy: proxy, host: self.serverName, port: self.originPort, originAddress: originAddress)
                } catch {
                    tcp.reset()
                    self.finish(.connectFailed(.unsupported))  // a name or credentials SOCKS5 cannot carry
                    return
                }
                self.stream = tcp
                self.phase = .tunneling
                self.tunnel = tunnel
                tcp.setStreamHandler(self)
                tunnel.request.withUnsafeBytes { tcp.write(borrowing: $0, sealing: false, completion: nil) }
            } else {
                self.startProtocol(on: tcp, takingOver: false)
            }
        case (.finishing, _):
            // Abandoned (timeout or `close`) while the TCP connect was in flight: the connect was cancelled,
            // or won the race; either way no descriptor is left open when the end is reported.
            if case .success(let tcp) = result { tcp.reset() }
            self.finish(self.decidedEnd!)
        case (.ended, _):
            // Abandoned while resolving and reported at once; resolution then failed (a success stops earlier).
            if case .success(let tcp) = result { tcp.reset() }
        case (.idle, _), (.tunneling, _), (.handshaking, _), (.open, _), (.closing, _):
            preconditionFailure("the connect task reports once, while connecting")
        }
    }

    /// Starts TLS (for `wss://`) and the upgrade on `tcp`, directly or inside a proxy's tunnel (`takingOver`: the core
    /// already reads `tcp`, as it did the proxy's answer). Over TLS, the upgrade request waits in the stream until the
    /// TLS handshake has completed.
    private func startProtocol(on tcp: TCPConnection, takingOver: Bool) {
        self.phase = .handshaking
        if let context = self.tlsContext {
            let session = TLSSession(context: context, serverName: self.serverName, port: self.originPort)
            let stream = TLSStream(tcp: tcp, session: session, takingOver: takingOver)
            self.stream = stream
            stream.setStreamHandler(self)
        } else {
            self.stream = tcp
            if !takingOver { tcp.setStreamHandler(self) }
        }
        guard let stream = self.stream else { return }
        // A failed write ends the connection, which `ended` reports.
        self.parser!.handshake.request.withUnsafeBytes { request in
            stream.write(borrowing: request, sealing: false, completion: nil)
        }
    }

    /// The proxy's answer, read while tunneling.
    private func proxyAnswered(_ bytes: UnsafeRawBufferPointer) {
        guard case .tunneling = self.phase, let tcp = self.stream as? TCPConnection else { return }
        switch self.tunnel!.received(bytes) {
        case .needMoreInput:
            break
        case .send(let request):
            request.withUnsafeBytes { tcp.write(borrowing: $0, sealing: false, completion: nil) }
        case .open:
            self.tunnel = nil
            self.startProtocol(on: tcp, takingOver: true)
        case .refused(let end, let graceful):
            self.tunnel = nil
            self.decide(end, graceful: graceful)
        }
    }

    private func connectTimedOut() {
        switch self.phase {
        case .connecting:
            self.abandonConnect(self.proxy == nil ? .connectFailed(.timedOut) : .proxyUnreachable(.timedOut))
        case .tunneling, .handshaking:
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
        // One frame may carry a whole message, so the engine's frame limit follows the message limit.
        var connection = WebSocketConnection(
            role: .client, maximumMessageSize: self.maximumMessageSize, random: MaskingEntropy())
        connection.receive(response.remaining)
        self.connection = connection
        if let stream = self.stream { self.wire.open(stream) }
        self.outlet.emit(.opened(subprotocol: response.subprotocol))
        self.updateReading()  // a hold asked for before the open applies from the start
        self.processFrames()
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
        case .tunneling, .handshaking:
            self.decide(.closedLocally, graceful: false)
        case .open:
            self.connection?.close(code: code, reason: reason)
            self.phase = .closing
            self.writeOutput(trackingClose: true)
            self.armCloseTimer()
        case .idle, .closing, .finishing, .ended:
            break  // nothing to close, or already closing
        }
    }

    /// The client's consumer is behind (`held`) or has caught up: reading stops or resumes. Before the handshake has
    /// completed, the hold applies from the open on.
    ///
    /// A hold that comes while the frames of a read are being handed out (the client holds as it publishes the
    /// message that crossed its watermark) stops them at once: the rest waits in the engine, and is handed out when
    /// the hold ends, before anything more is read.
    func holdReading(_ held: Bool) {
        self.inboundHeld = held
        self.updateReading()
        if !held { self.processFrames() }
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

    // MARK: - ByteStreamHandler

    func received(_ bytes: UnsafeRawBufferPointer, on stream: any ByteStream) {
        switch self.phase {
        case .tunneling:
            self.proxyAnswered(bytes)
        case .handshaking:
            self.parser!.append(bytes)
            do throws(HandshakeError) {
                guard let response = try self.parser!.parse() else { return }
                self.handshakeCompleted(response)
            } catch {
                self.handshakeFailed(error)
            }
        case .open, .closing:
            self.connection?.receive(bytes)
            self.processFrames()
        case .idle, .connecting, .finishing, .ended:
            break  // no reads before the handshake is sent; none after the end is decided
        }
    }

    func ended(_ end: ByteStreamEnd, on stream: any ByteStream) {
        self.stream = nil
        self.wire.closeForSending()  // from now on `send` and `sendPing` fail at once
        if case .tlsFailed(let failure) = end { self.tlsFailure = failure }
        switch end {
        case .endOfStream, .tlsFailed:
            guard let bound = self.bound else { fallthrough }
            // The descriptor is closed right after this call returns (or once our last bytes are flushed):
            // report the end on the next turn so that no descriptor is open when `.ended` arrives.
            self.loop.execute { bound.value.tcpEnded() }
        case .closedLocally, .failed:
            self.tcpEnded()
        }
    }

    private func tcpEnded() {
        switch self.phase {
        case .finishing:
            self.finish(self.decidedEnd!)
        case .tunneling:
            self.finish(.receiveFailed)  // the proxy hung up (or reset) before the tunnel opened
        case .handshaking:
            // A TLS failure before the open is the attempt's reason (a certificate failure is permanent). Otherwise:
            // reset or end of stream (without close_notify, over TLS) before the upgrade answer: the server hung up.
            if let failure = self.tlsFailure, failure != .truncated {
                self.finish(.tlsFailed(detail: failure.description, permanent: failure.isCertificateFailure))
            } else {
                self.finish(.receiveFailed)
            }
        case .open:
            // Reset, end of stream without a close frame, or a TLS failure: an ordinary loss.
            self.finish(.receiveFailed)
        case .closing:
            self.finish(.closedLocally)
        case .idle, .connecting, .ended:
            preconditionFailure("the TCP connection exists only from handshaking until the end is reported")
        }
    }

    // MARK: - Frames

    /// Hands every event the engine has to `handle`, until more bytes are needed or the connection is over (after
    /// every message before the peer's close frame or violation), then writes what we owe the peer.
    ///
    /// Each ping is answered as it comes while the write queue has room; while it has none, reading stops after this
    /// read, and the pongs owed meanwhile are coalesced by the engine into one for the latest ping.
    private func processFrames() {
        guard !self.processingFrames else { return }  // a hold released from inside a handler: the loop goes on
        self.processingFrames = true
        defer { self.processingFrames = false }
        while !self.inboundHeld, case .some(let outcome) = self.connection?.nextEvent({ self.handle($0) }) {
            switch outcome {
            case .continue:
                continue
            case .pinged:
                // Answered at once while the kernel takes everything; with a backlog, coalesced by the engine into
                // one pong at the end of this read (each small write queued behind others costs its own entry).
                if !self.waitingForWriteRoom, self.stream?.queuedWriteBytes == 0 { self.writeOutput() }
            case .closed(let closure):
                self.writeOutput()
                self.connectionClosed(closure)
                return
            }
        }
        self.writeOutput()
    }

    /// What handling an event left to do once the engine has returned.
    private enum Outcome {
        case `continue`
        /// A ping arrived: the engine owes a pong.
        case pinged
        case closed(WebSocketConnection<MaskingEntropy>.Closure)
    }

    /// Reports one event; the engine is mid-call, so nothing here touches it.
    private func handle(_ event: WebSocketConnection<MaskingEntropy>.Event) -> Outcome {
        switch event {
        case .received(let message):
            switch message.opcode {
            case .text:
                self.outlet.emit(.message(.text(String(decoding: message.payload, as: UTF8.self))))
            case .binary:
                let payload = message.payload
                let data = payload.baseAddress.map { Data(bytes: $0, count: payload.count) } ?? Data()
                self.outlet.emit(.message(.binary(data)))
            case .pong:
                guard message.payload.count == 8 else { break }  // not one of ours
                let id = message.payload.loadUnaligned(as: UInt64.self).bigEndian
                guard self.wire.forgetPing(id) else { break }  // unsolicited or repeated
                self.outlet.emit(.pong(id: id))
            case .ping:
                return .pinged
            default:
                break
            }
            return .continue
        case .closed(let closure):
            return .closed(closure)
        }
    }

    private func connectionClosed(_ closure: WebSocketConnection<MaskingEntropy>.Closure) {
        switch (self.phase, closure) {
        case (.open, .byPeer(let code, _)):
            self.decide(.peerClosed(code: code), graceful: true)
        case (.open, .violation(let error)):
            self.decide(.protocolViolation(code: error.closeCode), graceful: true)
        case (.closing, .byUs), (.closing, .violation):
            // Our close frame is out: the peer's answer (or its last violation) ends it; drop TCP.
            self.decide(.closedLocally, graceful: true)
        case (.open, .byUs), (.closing, .byPeer):
            preconditionFailure("the engine closes by us only after our close frame, by the peer only before it")
        case (.idle, _), (.connecting, _), (.tunneling, _), (.handshaking, _), (.finishing, _), (.ended, _):
            preconditionFailure("frames are decoded only while open or closing")
        }
    }

    // MARK: - Writing what we owe the peer

    /// Writes the engine's output (pongs; our close frame as the sealing write, after which no data frame or ping
    /// sent from another thread can follow on the wire), then stops reading if the write queue is over its high
    /// watermark.
    /// - Parameter trackingClose: the close frame counts as pending for `waitUntilCloseSent` until the kernel has
    ///   taken all of it or the write failed (either way nothing is pending any more).
    private func writeOutput(trackingClose: Bool = false) {
        guard let stream = self.stream else { return }
        let bound = self.bound
        self.connection?.drainOutput { bytes, seals in
            if seals { self.wire.closeForSending() }
            guard trackingClose, seals, let bound else {
                // A failure ends the TCP connection, which `ended` reports.
                stream.write(borrowing: bytes, sealing: seals, completion: nil)
                return
            }
            self.closeFramePending = true
            stream.write(borrowing: bytes, sealing: true) { _ in bound.value.closeFrameWritten() }
        }
        if let observer = self.flowObserver { observer(.owedWritten(queuedBytes: stream.queuedWriteBytes)) }
        guard !self.waitingForWriteRoom, stream.queuedWriteBytes > self.outbound.high, let bound else { return }
        self.waitingForWriteRoom = true
        self.updateReading()
        self.flowObserver?(.readingPausedForWriteRoom(queuedBytes: stream.queuedWriteBytes))
        stream.whenQueuedWrites(atMost: self.outbound.low) { bound.value.writeRoomAvailable() }
    }

    private func writeRoomAvailable() {
        self.waitingForWriteRoom = false
        self.updateReading()
        self.flowObserver?(.readingResumedAfterWriteRoom)
    }

    /// Pauses or resumes reading so that it runs exactly while nothing holds it.
    private func updateReading() {
        guard let stream = self.stream else { return }
        let paused = self.inboundHeld || self.waitingForWriteRoom
        guard paused != self.readingPaused else { return }
        self.readingPaused = paused
        if paused { stream.pauseReading() } else { stream.resumeReading() }
    }

    // MARK: - Ending

    /// Decides the end and lets go of TCP: `graceful` flushes what is queued (a close frame) and sends FIN,
    /// guarded by the close timeout; otherwise the connection is reset. `finish` follows when TCP has ended.
    private func decide(_ end: TransportEnd, graceful: Bool) {
        self.decidedEnd = end
        self.phase = .finishing
        self.connectTimer?.cancel()
        if graceful {
            self.stream?.close()
            self.armCloseTimer()
        } else {
            self.stream?.reset()
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
            self.stream?.reset()  // the flush of our last bytes stalled (the peer does not read)
        case .idle, .connecting, .tunneling, .handshaking, .open, .ended:
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
        self.stream = nil
        self.parser = nil
        self.connection = nil  // frees its buffers
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
}

/// What flow control did on one connection, for tests that check its bounds.
enum FlowObservation: Equatable, Sendable {
    /// More than the outbound high watermark waited to be written (what we owe the peer): reading stopped.
    case readingPausedForWriteRoom(queuedBytes: Int)
    /// The write queue is down to the low watermark: reading goes on (unless the consumer holds it).
    case readingResumedAfterWriteRoom
    /// A `send` found more than the high watermark queued and waits for the low one.
    case sendWaitingForRoom(queuedBytes: Int)
    /// What we owe the peer (pongs, the close frame) was written and left this much queued for the kernel.
    case owedWritten(queuedBytes: Int)
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
