import Foundation
import Synchronization
@testable import Tether
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A `WebSocketTask` that does nothing by itself: it records every call the connection makes, and the test plays
/// the platform — completes a pending `receive`, runs a ping's completion (once, twice or never), and delivers
/// the delegate callbacks, in any order, including after the end.
final class ScriptedWebSocketTask: WebSocketTask {
    /// A call the connection made, in order.
    enum Call: Equatable {
        case setMaximumMessageSize(Int)
        case resume
        case receive
        case sendPing
        case send(String)
        case cancel(code: UInt16, reason: Data)
        case invalidateSession
    }

    private struct State {
        var calls: [Call] = []
        var maximumMessageSize = 1 << 20  // the platform default
        /// The handshake response's status and headers (kept as values: the response object is made when read).
        var response: (status: Int, headers: [String: String])?
        var pendingReceives: [@Sendable (Result<URLSessionWebSocketTask.Message, any Error>) -> Void] = []
        var pingCompletions: [@Sendable ((any Error)?) -> Void] = []
    }

    private let state = Mutex(State())
    /// The connection the task reports to (what `FoundationWebSocketTaskFactory` gives its delegate bridge).
    let delegate: any WebSocketTaskDelegate

    init(delegate: any WebSocketTaskDelegate) {
        self.delegate = delegate
    }

    // MARK: What the connection did

    var calls: [Call] { self.state.withLock { $0.calls } }

    func count(_ call: Call) -> Int { self.calls.filter { $0 == call }.count }

    /// Receives asked for and not completed yet.
    var pendingReceiveCount: Int { self.state.withLock { $0.pendingReceives.count } }

    /// The close codes the connection sent through `cancel`.
    var sentCloseCodes: [UInt16] {
        self.calls.compactMap { if case .cancel(let code, _) = $0 { code } else { nil } }
    }

    // MARK: Playing the platform

    func setResponse(status: Int, headers: [String: String] = [:]) {
        self.state.withLock { $0.response = (status, headers) }
    }

    /// Completes the oldest pending `receive` with `result`; false when none is pending.
    @discardableResult
    func completeReceive(_ result: Result<URLSessionWebSocketTask.Message, any Error>) -> Bool {
        let completion = self.state.withLock { state in
            state.pendingReceives.isEmpty ? nil : state.pendingReceives.removeFirst()
        }
        guard let completion else { return false }
        completion(result)  // outside the lock: the connection re-arms `receive` from inside
        return true
    }

    @discardableResult
    func deliver(_ message: URLSessionWebSocketTask.Message) -> Bool {
        self.completeReceive(.success(message))
    }

    /// Runs the completion of the `index`th ping sent (from 0); it can be run any number of times.
    func completePing(_ index: Int, error: (any Error)? = nil) {
        let completion = self.state.withLock { $0.pingCompletions[index] }
        completion(error)
    }

    func open(subprotocol: String? = nil) { self.delegate.taskDidOpen(subprotocol: subprotocol) }

    func peerClosed(code: Int, reason: Data? = nil) { self.delegate.taskDidClose(code: code, reason: reason) }

    func complete(error: (any Error)? = nil) { self.delegate.taskDidComplete(error: error) }

    /// What URLSession does as a task completes, before `complete`: hands over the metrics it collected.
    func collectMetrics(_ times: URLSessionTransactionTimes, at end: Date) {
        self.delegate.taskDidCollectMetrics(times, at: end)
    }

    /// What URLSession does before following a redirect of the handshake: it asks the delegate about the request it
    /// made for `url` (the task's request with the new URL and `headers`), and follows the one it gets back, if any.
    func redirect(status: Int, to url: String, headers: [String: String]) -> ScriptedWebSocketTaskFactory.Request? {
        var request = URLRequest(url: URL(string: url)!)
        for (name, value) in headers {
            request.setValue(value, forHTTPHeaderField: name)
        }
        return self.delegate.taskWillRedirect(status: status, to: request).map {
            ScriptedWebSocketTaskFactory.Request(
                url: $0.url, timeoutInterval: $0.timeoutInterval, headers: $0.allHTTPHeaderFields ?? [:])
        }
    }

    /// What the delegate bridge does when `ServerTrustEvaluator` refuses the server (before the task completes).
    func refuseServerTrust(_ failure: ServerTrustFailure) {
        self.delegate.taskDidRefuseChallenge(.serverTrust(failure))
    }

    // MARK: WebSocketTask

    var maximumMessageSize: Int {
        get { self.state.withLock { $0.maximumMessageSize } }
        set {
            self.state.withLock { state in
                state.maximumMessageSize = newValue
                state.calls.append(.setMaximumMessageSize(newValue))
            }
        }
    }

    var response: HTTPURLResponse? {
        guard let (status, headers) = self.state.withLock({ $0.response }) else { return nil }
        return HTTPURLResponse(
            url: URL(string: "http://example.test/")!, statusCode: status, httpVersion: "HTTP/1.1",
            headerFields: headers)
    }

    func resume() {
        self.state.withLock { $0.calls.append(.resume) }
    }

    func send(_ message: URLSessionWebSocketTask.Message) async throws {
        let text: String
        switch message {
        case .string(let string): text = "text:\(string)"
        case .data(let data): text = "binary:\(data.count)"
        @unknown default: text = "unknown"
        }
        self.state.withLock { $0.calls.append(.send(text)) }
    }

    func receive(_ completion: @escaping @Sendable (Result<URLSessionWebSocketTask.Message, any Error>) -> Void) {
        self.state.withLock { state in
            state.calls.append(.receive)
            state.pendingReceives.append(completion)
        }
    }

    func sendPing(_ pongReceived: @escaping @Sendable ((any Error)?) -> Void) {
        self.state.withLock { state in
            state.calls.append(.sendPing)
            state.pingCompletions.append(pongReceived)
        }
    }

    func cancel(closeCode: UInt16, reason: Data) {
        self.state.withLock { $0.calls.append(.cancel(code: closeCode, reason: reason)) }
    }

    func invalidateSession() {
        self.state.withLock { $0.calls.append(.invalidateSession) }
    }
}

/// Hands out `ScriptedWebSocketTask`s and keeps them for the test, with the requests they were made for.
final class ScriptedWebSocketTaskFactory: WebSocketTaskFactory {
    /// What a task's request held (kept as values: URLRequest is not Sendable on every platform).
    struct Request: Sendable {
        let url: URL?
        let timeoutInterval: Double
        let headers: [String: String]

        func value(forHTTPHeaderField field: String) -> String? {
            self.headers.first { $0.key.lowercased() == field.lowercased() }?.value
        }
    }

    private let made = Mutex<[(request: Request, settings: WebSocketTaskSettings, task: ScriptedWebSocketTask)]>([])

    var tasks: [ScriptedWebSocketTask] { self.made.withLock { $0.map(\.task) } }
    var requests: [Request] { self.made.withLock { $0.map(\.request) } }
    /// The trust policy and proxy each task's session was given.
    var settings: [WebSocketTaskSettings] { self.made.withLock { $0.map(\.settings) } }

    func makeTask(
        for request: URLRequest, connection: WebSocketTaskSettings, delegate: any WebSocketTaskDelegate
    ) -> any WebSocketTask {
        let task = ScriptedWebSocketTask(delegate: delegate)
        let made = Request(
            url: request.url, timeoutInterval: request.timeoutInterval, headers: request.allHTTPHeaderFields ?? [:])
        self.made.withLock { $0.append((made, connection, task)) }
        return task
    }
}
