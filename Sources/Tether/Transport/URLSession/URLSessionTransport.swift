import Foundation
import Synchronization
import TetherCore
import TetherWire
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A transport over `URLSessionWebSocketTask`, the default on Apple platforms.
///
/// It handles the traps listed in DESIGN.md §7: each ping's completion is one-shot per ping id (it can run
/// twice or never; the session machine races it against its own deadline); `didCompleteWithError` is the
/// terminal event (a pending `receive` may never complete on TCP loss); each connection's session is
/// invalidated on teardown (a session holds its delegate until then); closes always carry an explicit code
/// (`cancel()` sends none); `maximumMessageSize` is set from the request (the platform default is 1 MiB).
///
/// On Linux, Foundation needs a libcurl built with WebSocket support; Debian's is not, and the
/// connection then ends with `.connectFailed(.unsupported)`. Use `SocketTransport` there.
public struct URLSessionTransport: WebSocketTransport {
    private let configuration: URLSessionConfiguration

    /// - Parameter configuration: the session configuration each connection's session is created from.
    public init(configuration: URLSessionConfiguration = .default) {
        self.configuration = configuration
    }

    public func connect(_ request: TransportRequest) -> any TransportConnection {
        URLSessionConnection(request: request, configuration: self.configuration)
    }
}

/// One `URLSessionWebSocketTask` with its own session and delegate.
final class URLSessionConnection: NSObject, TransportConnection, URLSessionWebSocketDelegate, Sendable {
    let events: AsyncStream<TransportEvent>
    private let sink: AsyncStream<TransportEvent>.Continuation
    private let closeTimeout: Int
    private let state = Mutex(State())
    // Set once in init, before any delegate callback can run; read-only afterwards.
    private let session: Mutex<URLSession?> = Mutex(nil)
    private let task: Mutex<URLSessionWebSocketTask?> = Mutex(nil)

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
    }

    init(request: TransportRequest, configuration: URLSessionConfiguration) {
        (self.events, self.sink) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
        self.closeTimeout = request.closeTimeout
        super.init()
        guard let scheme = request.url.scheme?.lowercased(), scheme == "ws" || scheme == "wss" else {
            self.finish(.connectFailed(.unsupported))
            return
        }
        var urlRequest = URLRequest(url: request.url)
        urlRequest.timeoutInterval = Double(request.connectTimeout) / 1000
        for header in request.headers {
            urlRequest.addValue(header.value, forHTTPHeaderField: header.name)
        }
        if !request.subprotocols.isEmpty {
            let offered = request.subprotocols.joined(separator: ", ")
            urlRequest.setValue(offered, forHTTPHeaderField: "Sec-WebSocket-Protocol")
        }
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1  // delegate callbacks in order
        let session = URLSession(configuration: configuration, delegate: self, delegateQueue: queue)
        let task = session.webSocketTask(with: urlRequest)
        task.maximumMessageSize = request.maximumMessageSize
        self.session.withLock { $0 = session }
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
        let closeCode = URLSessionWebSocketTask.CloseCode(rawValue: Int(code)) ?? .normalClosure
        task.cancel(with: closeCode, reason: Data(reason.utf8.prefix(123)))
        // If the platform never reports completion, end anyway after the close timeout.
        let timeout = self.closeTimeout
        Task { [weak self] in
            try? await Task.sleep(for: .milliseconds(timeout))
            self?.finish(.closedLocally)
        }
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

    // MARK: URLSessionWebSocketDelegate

    func urlSession(
        _ session: URLSession, webSocketTask: URLSessionWebSocketTask, didOpenWithProtocol protocol: String?
    ) {
        let first = self.state.withLock { state in
            guard !state.opened, !state.ended else { return false }
            state.opened = true
            return true
        }
        if first { self.sink.yield(.opened(subprotocol: `protocol`)) }
    }

    func urlSession(
        _ session: URLSession, webSocketTask: URLSessionWebSocketTask,
        didCloseWith closeCode: URLSessionWebSocketTask.CloseCode, reason: Data?
    ) {
        // Not terminal: `didCompleteWithError` follows. Remember the peer's code for it.
        let code: UInt16? = closeCode == .noStatusReceived || closeCode == .invalid ? nil : UInt16(closeCode.rawValue)
        self.state.withLock { $0.peerCloseCode = .some(code) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let (closingLocally, peerCode) = self.state.withLock { ($0.closingLocally, $0.peerCloseCode) }
        let end: TransportEnd
        if let peerCode, !closingLocally {
            end = .peerClosed(code: peerCode)
        } else if closingLocally {
            end = .closedLocally
        } else if let status = (task.response as? HTTPURLResponse)?.statusCode, status != 101 {
            // Parsed like the socket transport's (delay-seconds of any length or an HTTP-date against `Date`);
            // the session caps the wait.
            let response = task.response as? HTTPURLResponse
            let retryAfter = response?.value(forHTTPHeaderField: "Retry-After").flatMap { value in
                RetryAfter(
                    value.trimmingCharacters(in: .whitespaces),
                    responseDate: response?.value(forHTTPHeaderField: "Date")?.trimmingCharacters(in: .whitespaces))
            }
            end = .handshakeRejected(status: status, retryAfter: retryAfter?.millisecondsFromNow)
        } else {
            end = Self.end(for: error, opened: self.state.withLock { $0.opened })
        }
        self.finish(end)
    }

    // MARK: Internals

    private func receiveNext(_ task: URLSessionWebSocketTask) {
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
    private func receiveNextUnlessHeld(_ task: URLSessionWebSocketTask) {
        let parked = self.state.withLock { state -> Bool in
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
        let (pending, endWaiters) = self.state.withLock { state in
            defer {
                state.pendingPings.removeAll()
                state.endWaiters.removeAll()
            }
            return (state.pendingPings, state.endWaiters)
        }
        for id in pending.sorted() {
            self.sink.yield(.pingFailed(id: id))
        }
        self.sink.yield(.ended(end))
        self.sink.finish()
        self.session.withLock { $0 }?.invalidateAndCancel()
        for waiter in endWaiters {
            waiter.resume()
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
        default: return .connectFailed(.system(Int32(truncatingIfNeeded: error.code.rawValue)))
        }
    }
}
