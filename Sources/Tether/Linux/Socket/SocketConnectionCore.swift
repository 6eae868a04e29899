#if os(Linux)
import Foundation
import Synchronization
import TetherCore
import TetherPOSIX
import TetherWire

/// The WebSocket engine and its driver, as the client runs them.
typealias ClientWebSocket = WebSocketDriver

/// The connecting side of one `SocketConnection`: resolving, TCP connect, the HTTP proxy's tunnel, TLS and the
/// opening handshake; from the open on, the WebSocket protocol is the shared engine's, run by a `WebSocketDriver`
/// (the same as the test server's), and this type only turns its results into `TransportEvent`s. Used only on its
/// event loop's thread (it lives in a `LoopBound`); see `SocketConnection` for why that is safe.
///
/// States, each with its data: `connecting` (resolving, then TCP connect, in a task) → `tunneling` (through an HTTP
/// or SOCKS5 proxy) → `handshaking` (TLS, then the upgrade) → `open` (the driver) → `finishing` (the end is decided; the TCP
/// connection or the connect task still has to let go) → `ended` (reported once, after the descriptor was closed).
/// A redirect of the upgrade goes from `handshaking` back to `connecting`, to the next URL (`RedirectChain`), with
/// its own proxy decision and TLS; the stream it leaves is closed and its callbacks are ignored from then on.
/// One deadline (the connect timer) covers everything before the open, every hop included, and bounds a graceful
/// close decided then.
final class SocketConnectionCore: ByteStreamHandler {
    private enum State {
        /// Not started: the request was unsupported.
        case idle
        case connecting(Connecting)
        /// Connected to a proxy (HTTP or SOCKS5); the tunnel is being opened.
        case tunneling(Tunneling)
        case handshaking(Handshaking)
        case open(ClientWebSocket)
        case finishing(Finishing)
        case ended
    }

    private struct Connecting {
        let endpoint: SocketEndpoint
        let connectTimer: TimerHandle
        let task: Task<Void, Never>
        /// Whether the task may still open a socket (shared with it).
        let progress: ConnectProgress
    }

    private struct Tunneling {
        let endpoint: SocketEndpoint
        let connectTimer: TimerHandle
        let tcp: TCPConnection
        var tunnel: ProxyTunnel
    }

    private struct Handshaking {
        let endpoint: SocketEndpoint
        let connectTimer: TimerHandle
        /// The numeric address and port connected to, for the attempt a reset reports; nil through a proxy (its
        /// address is not the origin's).
        let address: String?
        /// The TCP connection, or TLS over it.
        let stream: any ByteStream
        var parser: HandshakeResponseParser
    }

    private struct Finishing {
        /// What `.ended` reports.
        let end: TransportEnd
        /// Before the open: bounds a graceful close (a reset when it fires).
        let connectTimer: TimerHandle?
        /// After the open: the driver still lets the stream go (within the engine's close timeout).
        let webSocket: ClientWebSocket?
        /// The stream (before the open, when one was connected).
        let stream: (any ByteStream)?
    }

    private let outlet: EventOutlet
    private let loop: EventLoop
    private let request: TransportRequest
    /// Where the TCP sockets are created, which hosts file names are looked up in, how addresses are raced.
    private let dialer: SocketDialer
    /// Where a `wss://` hop's TLS context comes from (see `SocketEndpoint.make`).
    private let tlsContexts: TLSContextKeeper?
    private var state = State.idle
    /// The wrapper holding this core, for timer and task callbacks. Set while running (a deliberate cycle),
    /// cleared by `finish`.
    private var bound: LoopBound<SocketConnectionCore>?
    /// The redirects followed so far and the URL asked last.
    private var redirects: RedirectChain
    /// When the connect deadline falls: every hop connects within what is left of it.
    private var connectDeadline = ContinuousClock.now
    /// The streams left for a redirect that have not reported their end yet (at most `maximumRedirects`): what they
    /// report is not this connection's.
    private var retiredStreams: [ObjectIdentifier] = []
    /// The client holds reading: its consumer is behind (`holdReading`). Applies from the open on.
    private var consumerHolds = false
    /// The message the engine lent last, copied out while it was locked, delivered once unlocked.
    private var received: TransportEvent?
    /// How the byte stream ended, once it has: after our close frame, an end of stream is the peer's answer, a
    /// reset or an error is not.
    private var streamEnd: ByteStreamEnd?
    /// Told when flow control acts (tests watch the bounds with it).
    private let flowObserver: (@Sendable (FlowObservation) -> Void)?
    /// Where the sending side finds the open connection.
    private let slot: WebSocketSlot
    /// Times the attempt's steps (`TransportConnection.attemptTimings()`).
    private let stopwatch: AttemptStopwatch

    init(
        request: TransportRequest, outlet: EventOutlet, loop: EventLoop, slot: WebSocketSlot,
        stopwatch: AttemptStopwatch, dialer: SocketDialer = .direct, tlsContexts: TLSContextKeeper? = nil,
        flowObserver: (@Sendable (FlowObservation) -> Void)? = nil
    ) {
        self.flowObserver = flowObserver
        self.stopwatch = stopwatch
        self.outlet = outlet
        self.slot = slot
        self.loop = loop
        self.dialer = dialer
        self.tlsContexts = tlsContexts
        self.request = request
        self.redirects = RedirectChain(start: request.url, limit: request.maximumRedirects)
    }

    // MARK: - Connecting

    /// Starts resolving and connecting; one deadline covers resolution, TCP connect and the handshake, and every
    /// redirect followed.
    func start(_ endpoint: SocketEndpoint, bound: LoopBound<SocketConnectionCore>) {
        guard case .idle = self.state else { return }
        self.bound = bound
        self.stopwatch.start()
        let deadline = ContinuousClock.now + self.request.connectTimeout
        self.connectDeadline = deadline
        let timer = self.loop.schedule(at: deadline) { bound.value.connectTimedOut() }
        self.connect(to: endpoint, timer: timer, bound: bound, redirected: false)
    }

    /// Resolves `endpoint` (its proxy's name, and the origin's for `socks5://`) and races its addresses, in a task.
    private func connect(
        to endpoint: SocketEndpoint, timer: TimerHandle, bound: LoopBound<SocketConnectionCore>, redirected: Bool
    ) {
        let deadline = self.connectDeadline
        let stopwatch = self.stopwatch
        let timeline = stopwatch.hop(redirected: redirected)
        let loop = self.loop
        let progress = ConnectProgress()
        let dialer = self.dialer
        let interface = self.request.interface
        let task = Task {
            let result: Result<TCPConnection, ConnectRaceFailure>
            var originAddress: SocketAddress?
            do throws(SocketError) {
                stopwatch.begin(.resolve)
                if endpoint.proxy?.needsOriginAddress == true {  // socks5://: the client resolves the origin
                    originAddress = try await Resolver.resolve(
                        host: endpoint.host, port: endpoint.port, hostsFile: dialer.hostsFile).first
                }
                // `Resolver` runs getaddrinfo on its own threads; this task only waits.
                let addresses = try await Resolver.resolve(
                    host: endpoint.connectHost, port: endpoint.connectPort, hostsFile: dialer.hostsFile)
                stopwatch.end(.resolve)
                guard progress.beginConnecting() else { return }  // abandoned while resolving: nothing to close
                let remaining = max(ContinuousClock.now.duration(to: deadline), .zero)
                result = await TCPConnection.race(
                    to: addresses, timeout: remaining, attemptDelay: dialer.attemptDelay, loop: loop,
                    namespace: dialer.namespace, interface: interface, timeline: timeline
                )
            } catch {
                result = .failure(ConnectRaceFailure(error: error, attempts: []))  // no address to try
            }
            let origin = originAddress
            if !loop.execute({ bound.value.connectFinished(result, originAddress: origin) }),
                case .success(let tcp) = result
            {
                tcp.reset()
            }
        }
        self.state = .connecting(
            Connecting(endpoint: endpoint, connectTimer: timer, task: task, progress: progress))
    }

    private func connectFinished(_ result: Result<TCPConnection, ConnectRaceFailure>, originAddress: SocketAddress?) {
        switch (self.state, result) {
        case (.connecting(let connecting), .failure(let race)):
            let failure = Self.connectFailure(for: race.error)
            // Numeric addresses and ports only (the resolver's), never the name: safe for records.
            let tried = race.attempts.map {
                ConnectAttempt(address: $0.address.description, failure: Self.connectFailure(for: $0.error))
            }
            self.finish(
                connecting.endpoint.proxy == nil
                    ? .connectFailed(failure, tried: tried) : .proxyUnreachable(failure, tried: tried))
        case (.connecting(let connecting), .success(let tcp)):
            let endpoint = connecting.endpoint
            guard let proxy = endpoint.proxy else {
                self.startProtocol(endpoint, on: tcp, takingOver: false, connectTimer: connecting.connectTimer)
                return
            }
            let tunnel: ProxyTunnel
            do throws(SOCKS5Error) {
                tunnel = try ProxyTunnel(
                    proxy: proxy, host: endpoint.host, port: endpoint.port, originAddress: originAddress)
            } catch {
                tcp.reset()
                connecting.connectTimer.cancel()
                self.finish(.connectFailed(.unsupported))  // a name or credentials SOCKS5 cannot carry
                return
            }
            self.stopwatch.begin(.proxy)
            self.state = .tunneling(
                Tunneling(endpoint: endpoint, connectTimer: connecting.connectTimer, tcp: tcp, tunnel: tunnel))
            tcp.setStreamHandler(self)
            tunnel.request.withUnsafeBytes { tcp.write(borrowing: $0, sealing: false, completion: nil) }
        case (.finishing(let finishing), _):
            // Abandoned (timeout or `close`) while the TCP connect was in flight: the connect was cancelled,
            // or won the race; either way no descriptor is left open when the end is reported.
            if case .success(let tcp) = result { tcp.reset() }
            self.finish(finishing.end)
        case (.ended, _):
            // Abandoned while resolving and reported at once; resolution then failed (a success stops earlier).
            if case .success(let tcp) = result { tcp.reset() }
        case (.idle, _), (.tunneling, _), (.handshaking, _), (.open, _):
            preconditionFailure("the connect task reports once, while connecting")
        }
    }

    /// Starts TLS (for `wss://`) and the upgrade on `tcp`, directly or inside a proxy's tunnel (`takingOver`: the core
    /// already reads `tcp`, as it did the proxy's answer). Over TLS, the upgrade request waits in the stream until the
    /// TLS handshake has completed.
    private func startProtocol(
        _ endpoint: SocketEndpoint, on tcp: TCPConnection, takingOver: Bool, connectTimer: TimerHandle
    ) {
        let stream: any ByteStream
        if let context = endpoint.tls {
            let session = TLSSession(context: context, serverName: endpoint.host, port: endpoint.port)
            let tls = TLSStream(tcp: tcp, session: session, takingOver: takingOver)
            // The upgrade request waits in the stream until TLS completes: the upgrade starts then.
            let stopwatch = self.stopwatch
            stopwatch.begin(.tls)
            tls.whenHandshakeCompletes { resumed in
                stopwatch.tlsCompleted(resumed: resumed)
                stopwatch.begin(.upgrade)
            }
            stream = tls
        } else {
            self.stopwatch.begin(.upgrade)
            stream = tcp
        }
        self.state = .handshaking(Handshaking(
            endpoint: endpoint, connectTimer: connectTimer,
            address: endpoint.proxy == nil ? tcp.remoteAddress?.description : nil, stream: stream,
            parser: HandshakeResponseParser(
                handshake: endpoint.handshake, keepingHeaders: self.request.responseHeaderNames)))
        if !(takingOver && stream === tcp) { stream.setStreamHandler(self) }
        // A failed write ends the connection, which `ended` reports.
        endpoint.handshake.request.withUnsafeBytes { stream.write(borrowing: $0, sealing: false, completion: nil) }
    }

    /// The proxy's answer, read while tunneling.
    private func proxyAnswered(_ bytes: UnsafeRawBufferPointer, _ tunneling: Tunneling) {
        var tunneling = tunneling
        let outcome = tunneling.tunnel.received(bytes)
        switch outcome {
        case .needMoreInput:
            self.state = .tunneling(tunneling)
        case .send(let request):
            self.state = .tunneling(tunneling)
            request.withUnsafeBytes { tunneling.tcp.write(borrowing: $0, sealing: false, completion: nil) }
        case .open:
            self.stopwatch.end(.proxy)
            self.startProtocol(
                tunneling.endpoint, on: tunneling.tcp, takingOver: true, connectTimer: tunneling.connectTimer)
        case .refused(let end, let graceful):
            self.decide(end, graceful: graceful)
        }
    }

    private func connectTimedOut() {
        switch self.state {
        case .connecting(let connecting):
            let proxied = connecting.endpoint.proxy != nil
            self.abandonConnect(connecting, proxied ? .proxyUnreachable(.timedOut) : .connectFailed(.timedOut))
        case .tunneling, .handshaking:
            self.decide(.connectFailed(.timedOut), graceful: false)
        case .finishing(let finishing):
            finishing.stream?.reset()  // a graceful close decided before the open stalled
        case .idle, .open, .ended:
            break  // the timer lost a race with the opening or the end
        }
    }

    /// Gives up while resolving or connecting. A TCP connect in flight is cancelled and awaited, so that its
    /// socket is closed before the end is reported; a resolution (which cannot be interrupted) is not awaited.
    private func abandonConnect(_ connecting: Connecting, _ end: TransportEnd) {
        let inFlight = connecting.progress.abandon()
        connecting.task.cancel()
        connecting.connectTimer.cancel()
        if inFlight {
            self.state = .finishing(Finishing(end: end, connectTimer: nil, webSocket: nil, stream: nil))
        } else {
            self.finish(end)
        }
    }

    private func handshakeCompleted(_ response: HandshakeResponse, _ handshaking: Handshaking) {
        // The server's answer to our permessage-deflate offers, checked strictly: a bad one fails the handshake.
        var compression: WebSocketCompression?
        if let options = self.request.compression {
            do throws(HandshakeError) {
                compression = try PerMessageDeflate.accept(response: response.extensions, offers: options.offers)
                    .map(options.engineCompression)
            } catch {
                return self.handshakeFailed(error)
            }
        }
        handshaking.connectTimer.cancel()
        self.stopwatch.end(.upgrade)
        // One frame may carry a whole message, so the engine's frame limit follows the message limit.
        var engine = WebSocketConnection(
            .init(
                role: .client, maximumMessageSize: self.request.maximumMessageSize,
                outbound: self.request.outboundWatermarks,
                closeTimeoutMilliseconds: self.request.closeTimeout.milliseconds,
                compression: compression),
            random: MaskingEntropy())
        engine.bytesReceived(response.remaining)
        engine.consumerHolds(self.consumerHolds)  // a hold asked for before the open applies from the start
        // The driver notes when bytes arrive: the heartbeat asks at a pong deadline (`SocketConnection`).
        let webSocket = ClientWebSocket(
            stream: handshaking.stream, engine: engine, delegate: self, tracksArrival: true)
        self.state = .open(webSocket)
        self.slot.open(webSocket)
        self.outlet.emit(.opened(HandshakeResult(
            subprotocol: response.subprotocol, extensionElements: response.extensions,
            compression: compression?.parameters, headers: response.headers)))
        webSocket.start()
    }

    private func handshakeFailed(_ error: HandshakeError) {
        switch error {
        case .rejected(let status, let retryAfter):
            let delay = retryAfter?.millisecondsFromNow
            self.decide(.handshakeRejected(status: status, retryAfter: delay), graceful: true)
        case .redirected(let status, let location):
            guard self.redirects.follows else {
                return self.decide(.handshakeRejected(status: status, retryAfter: nil), graceful: true)
            }
            switch self.redirects.follow(location: location) {
            case .follow(let url): self.redirect(status: status, to: url)
            case .refuse(let failure): self.decide(.redirectFailed(failure, status: status), graceful: true)
            }
        case .headerTooLarge, .malformed, .invalidUpgrade:
            // The parsers' details are fixed texts, never a header value: safe for the close record and logs.
            self.decide(.handshakeInvalid(detail: error.detail), graceful: true)
        }
    }

    /// Follows a redirect of the upgrade to `url` (checked by `redirects`): the next hop's request (its headers
    /// without credentials once a hop left the first origin), its proxy decision and TLS context as for the first
    /// URL, connected under the same deadline. The stream answered with the redirect is closed; from now on its
    /// callbacks are not this connection's (`isCurrent`).
    private func redirect(status: Int, to url: URL) {
        guard case .handshaking(let handshaking) = self.state, let bound = self.bound else {
            preconditionFailure("a redirect is read while handshaking, before the end")
        }
        var request = self.request
        request.url = url
        request.headers = self.redirects.headers(self.request.headers)
        let endpoint: SocketEndpoint
        switch SocketEndpoint.make(for: request, contexts: self.tlsContexts) {
        case .success(let made):
            endpoint = made
        case .failure(.invalidRequest(let detail)):
            return self.decide(.redirectFailed(.invalidLocation(detail), status: status), graceful: true)
        case .failure(.tlsConfiguration(let detail)):
            return self.decide(.tlsFailed(detail: detail, permanent: true), graceful: true)
        case .failure(.proxyScheme), .failure(.scheme), .failure(.missingHost):
            return self.decide(.connectFailed(.unsupported), graceful: true)  // as for the first URL
        }
        self.retiredStreams.append(ObjectIdentifier(handshaking.stream))
        handshaking.stream.close()
        self.outlet.emit(.redirected(status: status, to: url))
        self.connect(to: endpoint, timer: handshaking.connectTimer, bound: bound, redirected: true)
    }

    /// Whether `stream` was left for a redirect; its end, the last thing it reports, forgets it.
    private func isRetired(_ stream: any ByteStream, ending: Bool) -> Bool {
        guard let index = self.retiredStreams.firstIndex(of: ObjectIdentifier(stream)) else { return false }
        if ending { self.retiredStreams.remove(at: index) }
        return true
    }

    /// Decides the end before the open and lets go of the stream: `graceful` flushes and sends FIN, bounded by the
    /// connect deadline; otherwise the connection is reset. `finish` follows when the stream has ended.
    private func decide(_ end: TransportEnd, graceful: Bool) {
        let stream: any ByteStream
        var connectTimer: TimerHandle
        switch self.state {
        case .tunneling(let tunneling):
            (stream, connectTimer) = (tunneling.tcp, tunneling.connectTimer)
        case .handshaking(let handshaking):
            (stream, connectTimer) = (handshaking.stream, handshaking.connectTimer)
        case .idle, .connecting, .open, .finishing, .ended:
            preconditionFailure("an end is decided here only while tunneling or handshaking")
        }
        if !graceful { connectTimer.cancel() }
        self.state = .finishing(Finishing(
            end: end, connectTimer: graceful ? connectTimer : nil, webSocket: nil, stream: stream))
        if graceful { stream.close() } else { stream.reset() }
    }

    // MARK: - Calls from the connection's owner

    func close(code: UInt16, reason: String) {
        switch self.state {
        case .connecting(let connecting):
            self.abandonConnect(connecting, .closedLocally)
        case .tunneling, .handshaking:
            self.decide(.closedLocally, graceful: false)
        case .open(let webSocket):
            webSocket.close(code: code, reason: reason)
        case .idle, .finishing, .ended:
            break  // nothing to close, or already closing
        }
    }

    /// The client's consumer is behind (`held`) or has caught up: reading stops or resumes. Before the handshake has
    /// completed, the hold applies from the open on.
    ///
    /// A hold that comes while the messages of a read are being handed out (the client holds as it publishes the
    /// message that crossed its watermark) stops them at once: the rest waits in the engine, and is handed out when
    /// the hold ends, before anything more is read.
    func holdReading(_ held: Bool) {
        self.consumerHolds = held
        guard case .open(let webSocket) = self.state else { return }
        webSocket.consumerHolds(held)
    }

    func waitUntilCloseSent(_ continuation: CheckedContinuation<Void, Never>) {
        guard let webSocket = self.webSocket else { return continuation.resume() }
        webSocket.whenCloseFrameWritten { continuation.resume() }
    }

    // MARK: - ByteStreamHandler

    func received(_ bytes: UnsafeRawBufferPointer, on stream: any ByteStream) {
        guard !self.isRetired(stream, ending: false) else { return }  // left for a redirect: nothing of it matters
        switch self.state {
        case .tunneling(let tunneling):
            self.proxyAnswered(bytes, tunneling)
        case .handshaking(var handshaking):
            handshaking.parser.append(bytes)
            do throws(HandshakeError) {
                guard let response = try handshaking.parser.parse() else {
                    self.state = .handshaking(handshaking)
                    return
                }
                self.handshakeCompleted(response, handshaking)
            } catch {
                self.handshakeFailed(error)
            }
        case .open(let webSocket):
            webSocket.received(bytes)
        case .finishing(let finishing):
            finishing.webSocket?.received(bytes)  // the peer's answer to our close, or nothing (the engine decides)
        case .idle, .connecting, .ended:
            break  // no reads before the handshake is sent; none after the end
        }
    }

    func ended(_ end: ByteStreamEnd, on stream: any ByteStream) {
        guard !self.isRetired(stream, ending: true) else { return }  // left for a redirect: not this connection's
        self.slot.close()  // from now on `send` and `sendPing` fail at once
        switch end {
        case .endOfStream, .tlsFailed:
            guard let bound = self.bound else { fallthrough }
            // The descriptor is closed right after this call returns (or once our last bytes are flushed):
            // report the end on the next turn so that no descriptor is open when `.ended` arrives.
            self.loop.execute { bound.value.streamEnded(end) }
        case .closedLocally, .failed:
            self.streamEnded(end)
        }
    }

    private func streamEnded(_ end: ByteStreamEnd) {
        self.streamEnd = end
        if let webSocket = self.webSocket {
            webSocket.streamEnded()  // the engine's `ended` finishes
            return
        }
        switch self.state {
        case .open:
            preconditionFailure("an open connection has its driver")
        case .finishing(let finishing):
            finishing.connectTimer?.cancel()
            self.finish(finishing.end)
        case .tunneling(let tunneling):
            tunneling.connectTimer.cancel()
            self.finish(.receiveFailed)  // the proxy hung up (or reset) without answering CONNECT
        case .handshaking(let handshaking):
            handshaking.connectTimer.cancel()
            // A TLS failure before the open is the attempt's reason (a certificate failure is permanent). Otherwise:
            // reset or end of stream (without close_notify, over TLS) before the upgrade answer: the server hung up.
            // A reset is a reset whenever it comes before the open: the same name as during the TCP connect.
            switch end {
            case .tlsFailed(let failure) where failure != .truncated:
                self.finish(.tlsFailed(detail: failure.description, permanent: failure.isCertificateFailure))
            case .failed(.reset):
                let tried = handshaking.address.map { [ConnectAttempt(address: $0, failure: .reset)] } ?? []
                self.finish(.connectFailed(.reset, tried: tried))
            case .tlsFailed, .endOfStream, .closedLocally, .failed:
                self.finish(.receiveFailed)
            }
        case .idle, .connecting, .ended:
            preconditionFailure("the stream exists only from tunneling or handshaking until the end is reported")
        }
    }

    /// Reports the end: `failedPings` (pings still outstanding, when they count as failed) first, then exactly one
    /// `.ended`, then the stream finishes.
    private func finish(_ end: TransportEnd, failedPings: [UInt64] = []) {
        if case .ended = self.state { return }
        self.state = .ended
        self.slot.close()
        for id in failedPings {
            self.outlet.emit(.pingFailed(id: id))
        }
        self.outlet.emit(.ended(end))
        self.outlet.finish()
        self.bound = nil
    }

    // MARK: - Helpers

    /// The driver, from the open until the end.
    private var webSocket: ClientWebSocket? {
        switch self.state {
        case .open(let webSocket): webSocket
        case .finishing(let finishing): finishing.webSocket
        case .idle, .connecting, .tunneling, .handshaking, .ended: nil
        }
    }

    static func connectFailure(for error: SocketError) -> ConnectFailure {
        switch error {
        case .refused: .refused
        case .unreachable: .unreachable
        case .timedOut: .timedOut
        case .nameResolution: .nameResolution
        case .reset: .reset
        case .brokenPipe: .system(EPIPE)
        case .closed: .system(EBADF)
        case .addressInUse: .system(EADDRINUSE)
        case .cancelled: .system(ECANCELED)
        case .system(_, let code): .system(code)
        }
    }
}

extension SocketConnectionCore: WebSocketDriverDelegate {
    /// Copies a data message into the event the client reads (the one copy out of the receive buffer), except a large
    /// binary message received into storage of its own, which becomes the message's `Data` as it is; pings are the
    /// engine's, pongs arrive as `pongReceived(id:)`.
    func received(_ message: BorrowedMessage) -> Bool {
        switch message.opcode {
        case .text:
            self.received = .message(.text(String(decoding: message.payload, as: UTF8.self)))
        case .binary:
            self.received = .message(.binary(Self.data(message)))
        default:
            return false
        }
        return true
    }

    /// A binary message's payload as `Data`: its own storage kept when it has some (the `Data` holds it, and frees it
    /// with its last copy), else a copy.
    static func data(_ message: BorrowedMessage) -> Data {
        if let storage = message.storage, let base = storage.bytes.baseAddress {
            return Data(
                bytesNoCopy: base, count: storage.bytes.count,
                deallocator: .custom { _, _ in withExtendedLifetime(storage) {} })
        }
        let payload = message.payload
        return payload.baseAddress.map { Data(bytes: $0, count: payload.count) } ?? Data()
    }

    func deliverReceived() {
        guard let event = self.received else { return }
        self.received = nil
        self.outlet.emit(event)
    }

    func pongReceived(id: UInt64) {
        self.outlet.emit(.pong(id: id))
    }

    func pongSent(payload: [UInt8]) {}

    func closed(_ closure: WebSocketClosure) {
        guard case .open(let webSocket) = self.state else { return }
        let end: TransportEnd =
            switch closure {
            case .byPeer(let code, _): .peerClosed(code: code)
            // After our close frame (`sentClose: false`) a violation is no answer to it either: a loss.
            case .violation(let error, _): .protocolViolation(code: error.closeCode)
            case .byUs: .closedLocally  // the peer answered our close frame
            }
        self.slot.close()
        self.state = .finishing(Finishing(end: end, connectTimer: nil, webSocket: webSocket, stream: nil))
    }

    func ended(_ ending: WebSocketEnding, failedPings: [UInt64]) {
        let end: TransportEnd
        switch (self.state, ending) {
        case (.finishing(let finishing), _):
            end = finishing.end
        case (_, .streamEnded(afterOurClose: false)):
            end = .receiveFailed  // reset, end of stream without a close frame, or a TLS failure: an ordinary loss
        case (_, .streamEnded(afterOurClose: true)):
            // The peer hung up after our close frame without one of its own: in order (it read up to ours), an answer;
            // a reset or an error is a loss, like our close left unanswered: what we wrote may not have arrived.
            switch self.streamEnd {
            case .endOfStream?, .tlsFailed(.truncated)?: end = .closedLocally
            case .failed?, .tlsFailed?, .closedLocally?, nil: end = .receiveFailed
            }
        case (_, .closeTimedOut):
            end = .receiveFailed  // our close went unanswered: the stream was reset
        case (_, .reset), (_, .closed):
            end = .closedLocally
        }
        // A ping still unanswered when a close frame decided the end (the peer's close, or ours for its protocol
        // violation) was sent: it is not failed, only overtaken, and `.ended` says why the connection ended. Reported
        // failed first, it would close the session for the ping (ping_failed 1001) before the end's own reason (say
        // the 1009 on the wire) arrived. Otherwise (the connection broke, or we closed) outstanding pings fail first.
        switch end {
        case .peerClosed, .protocolViolation:
            self.finish(end)
        case .receiveFailed, .closedLocally, .connectFailed, .handshakeRejected, .handshakeInvalid, .proxyRejected,
            .socksRejected, .proxyUnreachable, .tlsFailed, .redirectFailed, .requestFailed:
            self.finish(end, failedPings: failedPings)
        }
    }

    func flow(_ event: WebSocketFlowEvent) {
        guard let observer = self.flowObserver else { return }
        switch event {
        case .written(let queued): observer(.owedWritten(queuedBytes: queued))
        case .pausedForWriteRoom(let queued): observer(.readingPausedForWriteRoom(queuedBytes: queued))
        case .resumedAfterWriteRoom: observer(.readingResumedAfterWriteRoom)
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
