import Foundation
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Makes each connection's `URLSessionWebSocketTask` in a session of its own, created from `configuration` with
/// the connection's proxy, if any.
struct FoundationWebSocketTaskFactory: WebSocketTaskFactory {
    let configuration: URLSessionConfiguration

    func makeTask(
        for request: URLRequest, connection: WebSocketTaskSettings, delegate: any WebSocketTaskDelegate
    ) -> any WebSocketTask {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1  // delegate callbacks in order
        let bridge = WebSocketTaskDelegateBridge(
            delegate, trust: connection.trust, host: request.url?.host ?? "", clientIdentity: connection.clientIdentity,
            credentials: Self.platformCredentials)
        var configuration = self.configuration
        if let proxy = connection.proxy, let copy = self.configuration.copy() as? URLSessionConfiguration {
            copy.connectionProxyDictionary = proxy
            configuration = copy
        }
        let session = URLSession(configuration: configuration, delegate: bridge, delegateQueue: queue)
        return FoundationWebSocketTask(session: session, task: session.webSocketTask(with: request))
    }

    /// The platform's side of the authentication challenges: Security on Apple platforms; none on Linux, whose
    /// Foundation asks the delegate no certificate questions.
    static var platformCredentials: (any ChallengeCredentials)? {
        #if canImport(Security)
        SecurityChallengeCredentials()
        #else
        nil
        #endif
    }
}

/// The real `WebSocketTask`: forwards each call to `URLSessionWebSocketTask` or its session, nothing more.
final class FoundationWebSocketTask: WebSocketTask {
    private let session: URLSession
    private let task: URLSessionWebSocketTask

    init(session: URLSession, task: URLSessionWebSocketTask) {
        self.session = session
        self.task = task
    }

    var maximumMessageSize: Int {
        get { self.task.maximumMessageSize }
        set { self.task.maximumMessageSize = newValue }
    }

    var response: HTTPURLResponse? { self.task.response as? HTTPURLResponse }

    func resume() {
        self.task.resume()
    }

    func send(_ message: URLSessionWebSocketTask.Message) async throws {
        try await self.task.send(message)
    }

    func receive(_ completion: @escaping @Sendable (Result<URLSessionWebSocketTask.Message, any Error>) -> Void) {
        self.task.receive(completionHandler: completion)
    }

    func sendPing(_ pongReceived: @escaping @Sendable ((any Error)?) -> Void) {
        self.task.sendPing(pongReceiveHandler: pongReceived)
    }

    func cancel(closeCode: UInt16, reason: Data) {
        // Apple's `CloseCode` is an NS_ENUM, which takes any raw value. Linux Foundation's is a closed Swift enum
        // without 1012-1014 and 3000-4999, so there those codes cannot be sent and go out as 1000.
        let platformCode = URLSessionWebSocketTask.CloseCode(rawValue: Int(closeCode)) ?? .normalClosure
        self.task.cancel(with: platformCode, reason: reason)
    }

    func invalidateSession() {
        self.session.invalidateAndCancel()
    }
}

/// The session's delegate: hands each callback to the connection as a `WebSocketTaskDelegate` call. The session
/// retains it (and so the connection) until `invalidateSession()`.
final class WebSocketTaskDelegateBridge: NSObject, URLSessionWebSocketDelegate, Sendable {
    let delegate: any WebSocketTaskDelegate
    /// How the server-trust challenge is answered, and the host name the certificate must name (see
    /// `WebSocketTaskDelegateBridge+Challenges.swift`): the first URL's, then each redirect's.
    let trust: ServerTrustPolicy
    private let trustedHost: Mutex<String>
    var host: String { self.trustedHost.withLock { $0 } }
    /// Presented on the client-certificate challenge.
    let clientIdentity: TLSOptions.ClientIdentity?
    /// The platform's side of the challenges; nil where Foundation asks none (Linux).
    let credentials: (any ChallengeCredentials)?

    init(
        _ delegate: any WebSocketTaskDelegate, trust: ServerTrustPolicy, host: String,
        clientIdentity: TLSOptions.ClientIdentity? = nil, credentials: (any ChallengeCredentials)?
    ) {
        self.delegate = delegate
        self.trust = trust
        self.trustedHost = Mutex(host)
        self.clientIdentity = clientIdentity
        self.credentials = credentials
    }

    func urlSession(
        _ session: URLSession, webSocketTask: URLSessionWebSocketTask, didOpenWithProtocol protocol: String?
    ) {
        self.delegate.taskDidOpen(subprotocol: `protocol`)
    }

    func urlSession(
        _ session: URLSession, webSocketTask: URLSessionWebSocketTask,
        didCloseWith closeCode: URLSessionWebSocketTask.CloseCode, reason: Data?
    ) {
        // Linux Foundation has already turned a code its enum does not name (1012-1014, 3000-4999) into 1003.
        self.delegate.taskDidClose(code: closeCode.rawValue, reason: reason)
    }

    /// A WebSocket task asks this before its handshake completes, for each redirect (Apple's documentation of
    /// `URLSessionWebSocketTask`); the connection decides (`taskWillRedirect`). A hop followed to another host makes
    /// that host the one its certificate must name.
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        let followed = self.delegate.taskWillRedirect(status: response.statusCode, to: request)
        if let host = followed?.url?.host(percentEncoded: false) {
            self.trustedHost.withLock { $0 = host }
        }
        completionHandler(followed)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        self.delegate.taskDidComplete(error: error)
    }

    /// The task's metrics, the last request's dates copied out (see `URLSessionTransactionTimes`).
    func urlSession(_ session: URLSession, task: URLSessionTask, didFinishCollecting metrics: URLSessionTaskMetrics) {
        guard let last = metrics.transactionMetrics.last else { return }
        let times = URLSessionTransactionTimes(
            fetchStart: last.fetchStartDate, domainLookupStart: last.domainLookupStartDate,
            domainLookupEnd: last.domainLookupEndDate, connectStart: last.connectStartDate,
            secureConnectionStart: last.secureConnectionStartDate, secureConnectionEnd: last.secureConnectionEndDate,
            connectEnd: last.connectEndDate, requestStart: last.requestStartDate,
            responseStart: last.responseStartDate, remoteAddress: last.remoteAddress)
        self.delegate.taskDidCollectMetrics(times, at: metrics.taskInterval.end)
    }
}
