import Foundation
import Synchronization
import TetherCore
import TetherWire
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A transport over `URLSessionWebSocketTask`, the default on Apple platforms.
///
/// It handles the traps listed in docs/ARCHITECTURE.md §7: each ping's completion is one-shot per ping id (it can run
/// twice or never; the session machine races it against its own deadline); `didCompleteWithError` is the
/// terminal event (a pending `receive` may never complete on TCP loss); each connection's session is
/// invalidated on teardown (a session holds its delegate until then); closes always carry an explicit code
/// (`cancel()` sends none); `maximumMessageSize` is set from the request (the platform default is 1 MiB).
///
/// `TLSOptions` apply through the session's server-trust challenge on Apple platforms: the chain is evaluated with
/// `additionalTrustRoots` as anchors besides the system's and the URL's host name required, then the pins are
/// matched against each chain certificate's SubjectPublicKeyInfo; a refusal ends the connection with a permanent
/// `.tlsFailed` whose detail reads as `SocketTransport`'s (`pin mismatch`, `untrusted issuer`, ...). A PKCS#12
/// client identity is presented on the client-certificate challenge. An HTTP proxy becomes the per-connection
/// session's `connectionProxyDictionary`. What it cannot honour, it refuses when the client is created
/// (`checkSupport(of:)`): compression, `tls.sessionResumption` off, a proxy with credentials or a SOCKS proxy, a PEM
/// identity, and on Linux (no challenges there) any TLS option, client identity or proxy. See docs/platforms.md.
///
/// Redirects: URLSession follows a WebSocket task's redirects itself and asks the session's delegate first; the
/// connection answers by `TransportRequest.maximumRedirects` and the rules `SocketTransport` applies (`RedirectChain`:
/// the limit, no `wss` to `ws`, no loop, `Authorization` and `Cookie` not sent to another origin), reports each hop
/// followed (`.redirected`) and verifies the next server's certificate against its own host name. A hop whose proxy
/// would differ from the first URL's (the environment's `no_proxy` deciding otherwise) is refused
/// (`.redirectFailed(.unsupported)`): the session has one proxy setting for all its hops.
///
/// On Linux, Foundation needs a libcurl built with WebSocket support; Debian's is not, and the
/// connection then ends with `.connectFailed(.unsupported)`. Use `SocketTransport` there.
public struct URLSessionTransport: WebSocketTransport {
    private let factory: any WebSocketTaskFactory
    private let clock: any Clock<Duration>

    /// - Parameter configuration: the session configuration each connection's session is created from.
    public init(configuration: URLSessionConfiguration = .default) {
        self.init(factory: FoundationWebSocketTaskFactory(configuration: configuration), clock: ContinuousClock())
    }

    /// - Parameters:
    ///   - factory: makes each connection's task (tests pass a scripted one).
    ///   - clock: runs the close timeout.
    init(factory: any WebSocketTaskFactory, clock: any Clock<Duration>) {
        self.factory = factory
        self.clock = clock
    }

    public func connect(_ request: TransportRequest) -> any TransportConnection {
        URLSessionConnection(request: request, factory: self.factory, clock: self.clock)
    }
}

/// One WebSocket task with its own session; the task's delegate.
final class URLSessionConnection: TransportConnection, WebSocketTaskDelegate {
    let events: AsyncStream<TransportEvent>
    private let sink: AsyncStream<TransportEvent>.Continuation
    private let closeTimeout: Int
    /// The response headers to keep, by name (`TransportRequest.responseHeaderNames`).
    private let responseHeaderNames: [String]
    private let clock: any Clock<Duration>
    private let state = Mutex(State())
    /// The redirects followed so far (asked on the delegate's queue, one at a time).
    private let redirects: Mutex<RedirectChain>
    /// The proxy configuration, and how the first URL goes through it: each hop must go the same way.
    private let proxy: ProxyConfiguration
    private let route: URLSessionProxySettings.Route
    // Set once in init, before the task is resumed (no callback comes before that); read-only afterwards.
    private let task: Mutex<(any WebSocketTask)?> = Mutex(nil)

    private struct State {
        var opened = false
        var ended = false
        var closingLocally = false
        var peerCloseCode: UInt16??
        var pendingPings: Set<UInt64> = []
        /// Callers of `waitUntilCloseSent` waiting for the end.
        var endWaiters: [CheckedContinuation<Void, Never>] = []
        /// The client holds reading (`holdReading`): no `receive` is armed after the current message.
        var readingHeld = false
        /// A message arrived while held: the next `receive` waits for the hold to end.
        var receiveParked = false
        /// Ends the connection if the task does not complete within the close timeout; cancelled by the end.
        var closeTimer: Task<Void, Never>?
        /// Why an authentication challenge was refused, reported before the task completes (cancelled).
        var refusal: ChallengeRefusal?
        /// Why a redirect was refused, and its status, reported when the task completes.
        var redirectRefusal: (failure: RedirectFailure, status: Int)?
        /// The task's timings, from its metrics (collected as it completes).
        var timings: AttemptTimings?
    }

    init(request: TransportRequest, factory: any WebSocketTaskFactory, clock: any Clock<Duration>) {
        (self.events, self.sink) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
        self.closeTimeout = request.closeTimeout.milliseconds
        self.responseHeaderNames = request.responseHeaderNames
        self.clock = clock
        self.redirects = Mutex(RedirectChain(start: request.url, limit: request.maximumRedirects))
        self.proxy = request.proxy
        self.route = URLSessionProxySettings.route(request.proxy, for: request.url)
        guard let scheme = request.url.scheme?.lowercased(), scheme == "ws" || scheme == "wss" else {
            self.finish(.connectFailed(.unsupported))
            return
        }
        var urlRequest = URLRequest(url: request.url)
        urlRequest.timeoutInterval = Double(request.connectTimeout.milliseconds) / 1000
        for header in request.headers {
            urlRequest.addValue(header.value, forHTTPHeaderField: header.name)
        }
        if !request.subprotocols.isEmpty {
            let offered = request.subprotocols.joined(separator: ", ")
            urlRequest.setValue(offered, forHTTPHeaderField: "Sec-WebSocket-Protocol")
        }
        let proxySettings: [String: any Sendable]?
        switch URLSessionProxySettings.resolve(request.proxy, for: request.url) {
        case .direct: proxySettings = nil
        case .proxy(let settings): proxySettings = settings
        case .refused(let end):
            self.finish(end)
            return
        }
        let task = factory.makeTask(
            for: urlRequest,
            connection: WebSocketTaskSettings(
                trust: ServerTrustPolicy(request.tls), proxy: proxySettings,
                clientIdentity: request.tls.clientIdentity),
            delegate: self)
        task.maximumMessageSize = request.maximumMessageSize
        self.task.withLock { $0 = task }
        task.resume()
        self.receiveNext(task)
    }

    // MARK: TransportConnection

    nonisolated(nonsending) func send(_ message: WebSocketMessage) async throws {
        guard let task = self.task.withLock({ $0 }), self.state.withLock({ $0.opened && !$0.ended }) else {
            throw WebSocketSendError.notOpen
        }
        let platformMessage: URLSessionWebSocketTask.Message
        switch message {
        case .text(let text): platformMessage = .string(text)
        case .binary(let data): platformMessage = .data(data)
        }
        do {
            try await task.send(platformMessage)
        } catch {
            throw WebSocketSendError.connectionFailed
        }
    }

    func sendPing(id: UInt64) {
        let task = self.task.withLock { $0 }
        let accepted = self.state.withLock { state in
            guard !state.ended, task != nil else { return false }
            state.pendingPings.insert(id)
            return true
        }
        guard accepted, let task else {
            self.sink.yield(.pingFailed(id: id))
            return
        }
        task.sendPing { [weak self] error in
            guard let self else { return }
            // One-shot: the completion can run twice (or never); only the first counts.
            let first = self.state.withLock { $0.pendingPings.remove(id) != nil }
            guard first else { return }
            self.sink.yield(error == nil ? .pong(id: id) : .pingFailed(id: id))
        }
    }

    func close(code: UInt16, reason: String) {
        let proceed = self.state.withLock { state in
            guard !state.ended, !state.closingLocally else { return false }
            state.closingLocally = true
            return true
        }
        guard proceed, let task = self.task.withLock({ $0 }) else { return }
        task.cancel(closeCode: code, reason: Self.closeReason(reason))
        // If the platform never reports completion, end anyway after the close timeout: unanswered, the close proves
        // nothing of what was written before it.
        let timer = Self.run(after: .milliseconds(self.closeTimeout), on: self.clock) { [weak self] in
            self?.finish(.receiveFailed)
        }
        let ended = self.state.withLock { state in
            state.closeTimer = timer
            return state.ended
        }
        if ended { timer.cancel() }  // the end came while the timer was being made
    }

    /// `URLSessionWebSocketTask` does not report when its close frame was written, so this waits for the end of
    /// the task, which comes after the server answered the close frame or after the close timeout: an upper
    /// bound, never a premature "sent".
    /// The task has no flow control of its own; not asking it for the next message is how this transport stops
    /// reading (URLSession then stops reading the socket once its own buffer is full).
    func holdReading(_ held: Bool) {
        let resume = self.state.withLock { state -> Bool in
            state.readingHeld = held
            guard !held, state.receiveParked else { return false }
            state.receiveParked = false
            return true
        }
        if resume, let task = self.task.withLock({ $0 }) { self.receiveNext(task) }
    }

    func waitUntilCloseSent() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let waiting = self.state.withLock { state in
                guard state.closingLocally, !state.ended else { return false }
                state.endWaiters.append(continuation)
                return true
            }
            if !waiting { continuation.resume() }
        }
    }

    // MARK: WebSocketTaskDelegate

    func taskDidOpen(subprotocol: String?) {
        let first = self.state.withLock { state in
            guard !state.opened, !state.ended else { return false }
            state.opened = true
            return true
        }
        if first { self.sink.yield(.opened(self.handshake(subprotocol: subprotocol))) }
    }

    func taskDidClose(code: Int, reason: Data?) {
        // Not terminal: `taskDidComplete` follows. Remember the peer's code for it; 1005 (no status received) and
        // 0 (the platform's "invalid") mean the close frame had no code.
        let peerCode = code == 1005 || code == 0 ? nil : UInt16(exactly: code)
        self.state.withLock { $0.peerCloseCode = .some(peerCode) }
    }

    func taskDidRefuseChallenge(_ refusal: ChallengeRefusal) {
        self.state.withLock { state in
            if state.refusal == nil { state.refusal = refusal }
        }
    }

    func taskWillRedirect(status: Int, to request: URLRequest) -> URLRequest? {
        guard let url = request.url else { return self.refuseRedirect(.invalidLocation("missing"), status: status) }
        let hop = self.redirects.withLock { chain -> (RedirectChain.Hop, stayed: Bool)? in
            guard chain.follows else { return nil }
            let hop = chain.follow(to: url)
            return (hop, chain.stayedAtOrigin)
        }
        guard let (hop, stayedAtOrigin) = hop else { return nil }  // redirects off: the 3xx is the answer
        switch hop {
        case .refuse(let failure):
            return self.refuseRedirect(failure, status: status)
        case .follow(let next):
            guard URLSessionProxySettings.route(self.proxy, for: next) == self.route else {
                let detail = "the proxy for the new host differs from the first URL's"
                return self.refuseRedirect(.unsupported(detail), status: status)
            }
            var followed = request
            if !stayedAtOrigin {
                for name in RedirectChain.credentialHeaders {
                    followed.setValue(nil, forHTTPHeaderField: name)
                }
            }
            self.sink.yield(.redirected(status: status, to: next))
            return followed
        }
    }

    /// Remembers why the redirect was refused, for `taskDidComplete`; nil, URLSession's "do not follow".
    private func refuseRedirect(_ failure: RedirectFailure, status: Int) -> URLRequest? {
        self.state.withLock { state in
            if state.redirectRefusal == nil { state.redirectRefusal = (failure, status) }
        }
        return nil
    }

    func taskDidCollectMetrics(_ times: URLSessionTransactionTimes, at end: Date) {
        let timings = times.timings(until: end)
        self.state.withLock { $0.timings = timings }
    }

    /// What URLSession's metrics tell (see `URLSessionTransactionTimes`): URLSession collects them as the task
    /// completes, so an attempt that fails has them on its record, and one that opened does not (they come at its
    /// end, after its record). Nil until then.
    func attemptTimings() -> AttemptTimings? {
        self.state.withLock { $0.timings }
    }

    func taskDidComplete(error: (any Error)?) {
        let (closingLocally, peerCode, refusal, redirectRefusal) = self.state.withLock {
            ($0.closingLocally, $0.peerCloseCode, $0.refusal, $0.redirectRefusal)
        }
        let response = self.task.withLock { $0 }?.response
        let end: TransportEnd
        if let refusal {
            end = refusal.end  // the task completes as cancelled: the refusal is why
        } else if let redirectRefusal, !closingLocally {
            end = .redirectFailed(redirectRefusal.failure, status: redirectRefusal.status)
        } else if let peerCode, !closingLocally {
            end = .peerClosed(code: peerCode)
        } else if closingLocally {
            // Answered (the peer's close frame, or the task completing without an error) or broken: only an answer
            // proves that the peer read what came before our close.
            end = peerCode != nil || error == nil ? .closedLocally : .receiveFailed
        } else if let response, response.statusCode != 101 {
            // Parsed like the socket transport's (delay-seconds of any length or an HTTP-date against `Date`);
            // the session caps the wait.
            let retryAfter = response.value(forHTTPHeaderField: "Retry-After").flatMap { value in
                RetryAfter(
                    value.trimmingCharacters(in: .whitespaces),
                    responseDate: response.value(forHTTPHeaderField: "Date")?.trimmingCharacters(in: .whitespaces))
            }
            end = .handshakeRejected(status: response.statusCode, retryAfter: retryAfter?.millisecondsFromNow)
        } else {
            end = Self.end(for: error, opened: self.state.withLock { $0.opened })
        }
        self.finish(end)
    }

    // MARK: Internals

    /// What the handshake agreed, read from the task's response: its `Sec-WebSocket-Extensions` (the platform's own
    /// offer; Tether offers none through this transport) and the headers asked for, each as the platform gives it (a
    /// header the server repeated, as one value joined with commas).
    private func handshake(subprotocol: String?) -> HandshakeResult {
        let response = self.task.withLock { $0 }?.response
        let extensions = response?.value(forHTTPHeaderField: "Sec-WebSocket-Extensions").map(ExtensionElement.list)
        let headers = self.responseHeaderNames.compactMap { name in
            response?.value(forHTTPHeaderField: name).map { (name: name, value: $0) }
        }
        return HandshakeResult(
            subprotocol: subprotocol, extensions: (extensions ?? []).map(WebSocketExtension.init),
            compression: extensions.flatMap { PerMessageDeflate.agreement(in: $0.map(\.headerText)) },
            headers: headers)
    }

    private func receiveNext(_ task: any WebSocketTask) {
        task.receive { [weak self] result in
            guard let self else { return }
            switch result {
            case .success(.string(let text)):
                self.sink.yield(.message(.text(text)))
                self.receiveNextUnlessHeld(task)
            case .success(.data(let data)):
                self.sink.yield(.message(.binary(data)))
                self.receiveNextUnlessHeld(task)
            case .success:
                self.receiveNext(task)  // a future message kind: skip it, keep reading
            case .failure:
                break  // not terminal: `didCompleteWithError` reports how the task ended
            }
        }
    }

    /// Arms the next `receive`, or parks it until `holdReading(false)`.
    private func receiveNextUnlessHeld(_ task: any WebSocketTask) {
        let parked = self.state.withLock { state -> Bool in
            guard !state.ended else { return true }  // nothing more to read
            guard state.readingHeld else { return false }
            state.receiveParked = true
            return true
        }
        if !parked { self.receiveNext(task) }
    }

    /// Reports the one terminal event, finishes the stream and releases the session and its delegate.
    private func finish(_ end: TransportEnd) {
        let first = self.state.withLock { state in
            guard !state.ended else { return false }
            state.ended = true
            return true
        }
        guard first else { return }
        // Pings still waiting get their failure before the end, so no ping id is left without an answer.
        let (pending, endWaiters, closeTimer) = self.state.withLock { state in
            defer {
                state.pendingPings.removeAll()
                state.endWaiters.removeAll()
                state.closeTimer = nil
            }
            return (state.pendingPings, state.endWaiters, state.closeTimer)
        }
        closeTimer?.cancel()
        for id in pending.sorted() {
            self.sink.yield(.pingFailed(id: id))
        }
        self.sink.yield(.ended(end))
        self.sink.finish()
        self.task.withLock { $0 }?.invalidateSession()
        for waiter in endWaiters {
            waiter.resume()
        }
    }

    /// At most 123 bytes of `reason` (a close frame's payload is at most 125), cut between two characters so that
    /// the reason stays valid UTF-8.
    static func closeReason(_ reason: String) -> Data {
        var bytes = 0
        var end = reason.startIndex
        for character in reason {
            let size = character.utf8.count
            guard bytes + size <= 123 else { break }
            bytes += size
            end = reason.index(after: end)
        }
        return Data(reason[..<end].utf8)
    }

    /// Runs `action` once `delay` has passed on `clock`, measured from now (not from when the task starts);
    /// cancelling the returned task skips it.
    private static func run<C: Clock<Duration>>(
        after delay: Duration, on clock: C, _ action: @escaping @Sendable () -> Void
    ) -> Task<Void, Never> {
        let deadline = clock.now.advanced(by: delay)
        return Task {
            do {
                try await clock.sleep(until: deadline, tolerance: nil)
            } catch {
                return
            }
            action()
        }
    }

    /// Maps a platform error to how the connection ended.
    static func end(for error: (any Error)?, opened: Bool) -> TransportEnd {
        guard let error = error as? URLError else { return opened ? .receiveFailed : .connectFailed(.system(-1)) }
        if opened { return .receiveFailed }
        switch error.code {
        case .unsupportedURL: return .connectFailed(.unsupported)  // also "WebSockets not supported by libcurl"
        case .cannotConnectToHost: return .connectFailed(.refused)
        case .cannotFindHost, .dnsLookupFailed: return .connectFailed(.nameResolution)
        case .notConnectedToInternet, .networkConnectionLost: return .connectFailed(.unreachable)
        case .timedOut: return .connectFailed(.timedOut)
        case .badServerResponse: return .handshakeInvalid(detail: "bad server response")
        // Mutual TLS: the server wanted a client certificate (`TLSOptions.clientIdentity`) or refused ours; the same
        // details as `SocketTransport`'s (which adds the alert), and as permanent: retrying cannot help.
        case .clientCertificateRequired: return .tlsFailed(detail: "client certificate required", permanent: true)
        case .clientCertificateRejected: return .tlsFailed(detail: "client certificate rejected", permanent: true)
        default: return .connectFailed(.system(Int32(truncatingIfNeeded: error.code.rawValue)))
        }
    }
}
