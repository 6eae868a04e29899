#if os(Linux)
import Foundation
import Tether
import TetherCore
import TetherTestServer

/// Tokens that expire (docs/retry.md, "Fresh credentials for each attempt"): the server accepts each token for two
/// upgrades and answers 401 afterwards; the client's request provider makes a fresh one, and the session goes on.
extension CheckScenarios {
    // MARK: Token refresh

    static func tokenRefresh(_ run: ScenarioRun) async throws(CheckFailure) {
        let tokens: ExpiringTokens
        do {
            tokens = try ExpiringTokens(uses: 2)
        } catch {
            throw .setup("tokens: \(error)")
        }
        let accepted = Scenario.echo.selecting(subprotocol: "feed.v1")
            .addingResponseHeader(name: "X-Session", value: "s-1").closing(afterMilliseconds: 50, code: 1001)
        let server = try run.server(describedAs: "each token accepted twice, then 401; " + accepted.description) {
            tokens.scenario(for: $0, accepting: accepted)
        }
        let url = server.url(path: "/feed")
        let (client, recorder) = try run.client(url: url) {
            $0.subprotocols = ["feed.v1"]
            $0.responseHeaderNames = ["X-Session"]
            $0.requestProvider = { context in
                let token = context.credentialsRejected ? tokens.issue() : tokens.current
                return ConnectionRequest(url: URL(string: url)!, headers: [(name: "Authorization", value: token)])
            }
        }
        await client.start()
        let snapshot = try await run.wait(recorder, "an open with a fresh token") { snapshot in
            guard let refused = snapshot.records.first(where: { $0.reason == .handshakeRejected(status: 401) })
            else { return false }
            return snapshot.events.contains { event in
                guard case .stateChanged(let state, _) = event else { return false }
                return state.phase == .open && state.generation > refused.generation
            }
        }
        let refused = snapshot.records.first { $0.reason == .handshakeRejected(status: 401) }
        let generation = refused?.generation ?? 0
        let records = snapshot.records.filter { $0.generation <= generation + 1 }
        let fresh = records.first(.connecting, generation: generation + 1)
        let open = snapshot.events.lazy.compactMap { event -> ConnectionState? in
            guard case .stateChanged(let state, _) = event, state.phase == .open else { return nil }
            return state.generation > generation ? state : nil
        }.first
        let waited = records.of(.retryScheduled, generation: generation)
        let refusedAttempt = records.first(.connecting, generation: generation)?.attempt
        run.expect(fresh != nil && fresh?.time == refused?.time && waited.isEmpty && fresh?.attempt == refusedAttempt,
                   "asked for a fresh token at once: no wait, no attempt counted",
                   "\(waited.count) retries, attempts \(refusedAttempt ?? -1) then \(fresh?.attempt ?? -1)")
        run.expect(open?.generation == generation + 1, "the next attempt opened with the fresh token",
                   "refused gen \(generation), open gen \(open?.generation ?? -1)")
        run.expect(records.of(.gaveUp).isEmpty && !records.contains { $0.to == .failed || $0.to == .stopped },
                   "one session throughout: never failed nor stopped")
        let handshake = open?.handshake
        run.expect(handshake?.subprotocol == "feed.v1" && handshake?.values(ofHeader: "x-session") == ["s-1"],
                   "the subprotocol and the header asked for reach the open state",
                   handshake.map { "\($0)" } ?? "none")
        let outcomes = server.connections.compactMap { $0.handshake?.description }
        let admitted = outcomes.prefix { $0 != "rejected 401" }.count
        run.expect(admitted >= 2 && outcomes.count > admitted, "the server refused the used-up token",
                   outcomes.prefix(admitted + 2).joined(separator: ", "))
        run.note("refused", "gen \(generation)")
        run.note("protocol", handshake?.subprotocol ?? "none")
    }
}
#endif
