import Synchronization

/// Credentials that expire, for a test of a client that refreshes them (`WebSocketConfiguration.requestProvider` in
/// `Tether`): the server accepts each token (the value of a request header, `Authorization` by default) for `uses`
/// upgrades, and answers `401` to a token it has accepted that many times, to an old token (one older than the newest
/// token issued or seen), and to a request without one. `issue()` plays the app's auth service.
///
/// ```swift
/// let tokens = try ExpiringTokens(uses: 3)
/// let server = try TestServer(scenario: tokens.scenario(accepting: .echo))
/// // the client's request provider: `context.credentialsRejected ? tokens.issue() : tokens.current`
/// ```
///
/// Tokens are compared, never printed nor recorded (the server's records name the header only).
public final class ExpiringTokens: Sendable {
    private struct Ledger {
        /// Upgrades accepted per token, in the order the tokens first came.
        var uses: [String: Int] = [:]
        var order: [String] = []
        var accepted = 0
        var refused = 0
        var issued = 0
    }

    /// The request header that carries the token.
    public let header: String
    /// How many upgrades one token is good for.
    public let uses: Int
    private let ledger = Mutex(Ledger())

    /// - Parameters:
    ///   - header: the request header that carries the token (default `Authorization`; case-insensitive).
    ///   - uses: how many upgrades one token is good for; at least 1.
    /// - Throws: `TestServerError.invalidArgument` when `uses` is below 1.
    public init(header: String = "Authorization", uses: Int) throws(TestServerError) {
        guard uses >= 1 else { throw .invalidArgument("ExpiringTokens uses must be at least 1, not \(uses)") }
        self.header = header
        self.uses = uses
    }

    /// The scenario picker for a `TestServer`: `accepted` for a request whose token is still good, a `401` refusal
    /// otherwise.
    public func scenario(accepting accepted: Scenario) -> @Sendable (ConnectionContext) -> Scenario {
        { context in self.scenario(for: context, accepting: accepted) }
    }

    /// `accepted` when the request's token is good (and counts one use of it), else a `401` refusal.
    public func scenario(for context: ConnectionContext, accepting accepted: Scenario) -> Scenario {
        let token = context.header(self.header)
        let good = self.ledger.withLock { ledger -> Bool in
            guard let token, !token.isEmpty else {
                ledger.refused += 1
                return false
            }
            let used = ledger.uses[token] ?? 0
            if used == 0, !ledger.order.contains(token) { ledger.order.append(token) }
            let newest = ledger.order.last == token
            guard used < self.uses, newest else {
                ledger.refused += 1
                return false
            }
            ledger.uses[token] = used + 1
            ledger.accepted += 1
            return true
        }
        return good ? accepted : .reject(status: 401)
    }

    /// A new token (`token-1`, `token-2`, ...), the newest from now on: every token issued or seen before it is
    /// old. The test's stand-in for the app's auth service.
    public func issue() -> String {
        self.ledger.withLock { ledger in
            ledger.issued += 1
            let token = "token-\(ledger.issued)"
            ledger.order.append(token)
            return token
        }
    }

    /// The newest token issued (issuing the first when none was).
    public var current: String {
        let newest = self.ledger.withLock { ledger in ledger.issued > 0 ? "token-\(ledger.issued)" : nil }
        return newest ?? self.issue()
    }

    /// Upgrades accepted so far.
    public var accepted: Int { self.ledger.withLock { $0.accepted } }
    /// Upgrades refused with `401` so far.
    public var refused: Int { self.ledger.withLock { $0.refused } }
}
