import Foundation
import Synchronization
import Tether

/// A request provider as an app's would be, for tests: it hands out the token `secret-1` and a new one
/// (`secret-2`, ...) whenever the previous attempt's credentials were refused, in an `Authorization` header and in the
/// URL's query, and records what each call was told.
final class TokenIssuer: Sendable {
    private let state = Mutex<(token: Int, contexts: [ConnectionRequest.Context])>((1, []))
    let base: URL

    init(base: URL) {
        self.base = base
    }

    /// What each call was told, in order.
    var contexts: [ConnectionRequest.Context] { self.state.withLock { $0.contexts } }
    /// The token handed out last.
    var token: String { "secret-\(self.state.withLock { $0.token })" }

    func request(_ context: ConnectionRequest.Context) -> ConnectionRequest {
        let token = self.state.withLock { state in
            state.contexts.append(context)
            if context.credentialsRejected { state.token += 1 }
            return state.token
        }
        var components = URLComponents(url: self.base, resolvingAgainstBaseURL: false)!
        components.queryItems = [URLQueryItem(name: "token", value: "secret-\(token)")]
        return ConnectionRequest(
            url: components.url!, headers: [(name: "Authorization", value: "Bearer secret-\(token)")])
    }

    var provider: ConnectionRequest.Provider {
        { context in self.request(context) }
    }
}

/// A request provider that does not answer until the test lets it, whatever cancellation says (a provider that
/// ignores it): `asked` announces each call, `release()` lets every call waiting return `answer`.
final class HeldProvider: Sendable {
    let asked: AsyncStream<ConnectionRequest.Context>
    private let askedSink: AsyncStream<ConnectionRequest.Context>.Continuation
    private let waiting = Mutex<(released: Bool, calls: [CheckedContinuation<Void, Never>])>((false, []))
    private let answer: ConnectionRequest

    init(answer: ConnectionRequest) {
        (self.asked, self.askedSink) = AsyncStream.makeStream()
        self.answer = answer
    }

    func release() {
        let calls = self.waiting.withLock { state in
            state.released = true
            defer { state.calls.removeAll() }
            return state.calls
        }
        for call in calls { call.resume() }
    }

    var provider: ConnectionRequest.Provider {
        { context in
            self.askedSink.yield(context)
            await withCheckedContinuation { (call: CheckedContinuation<Void, Never>) in
                let released = self.waiting.withLock { state in
                    if !state.released { state.calls.append(call) }
                    return state.released
                }
                if released { call.resume() }
            }
            return self.answer
        }
    }
}
