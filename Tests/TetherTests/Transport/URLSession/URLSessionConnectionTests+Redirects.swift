import Foundation
import Testing
import TetherCore
@testable import Tether
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Redirects through URLSession, which follows a WebSocket task's redirects itself and asks the delegate first
/// (Apple's documentation of `URLSessionWebSocketTask`): the connection answers by the rules `SocketTransport`
/// applies (`RedirectChain`), reports each hop, and ends a refused one as `redirectFailed`.
extension URLSessionConnectionTests {
    static let original = ["Authorization": "Bearer t", "Sec-WebSocket-Protocol": "chat, v2", "X-App": "7"]

    @Test func aHopWithinTheLimitIsFollowedAndReportedWithTheCredentialsForItsOriginOnly() async {
        let harness = Harness(url: "wss://example.test/feed")
        let task = harness.task
        let same = task.redirect(status: 302, to: "wss://example.test/v2/feed?token=x", headers: Self.original)
        #expect(same?.url?.absoluteString == "wss://example.test/v2/feed?token=x")
        #expect(same?.value(forHTTPHeaderField: "Authorization") == "Bearer t")
        // URLSession spells the next URL as it likes (`https`): it is followed as `wss`, credentials left behind.
        let other = task.redirect(status: 307, to: "https://other.test/feed", headers: Self.original)
        #expect(other?.url?.absoluteString == "https://other.test/feed")
        #expect(other?.value(forHTTPHeaderField: "Authorization") == nil)
        #expect(other?.value(forHTTPHeaderField: "Sec-WebSocket-Protocol") == "chat, v2")
        #expect(other?.value(forHTTPHeaderField: "X-App") == "7")
        task.open(subprotocol: nil)
        harness.connection.close(code: 1000, reason: "")
        task.complete()
        #expect(await harness.events() == [
            .redirected(302, "wss://example.test/v2/feed?token=x"), .redirected(307, "wss://other.test/feed"),
            .opened(nil), .ended(.closedLocally),
        ])
    }

    @Test func aHopBeyondTheLimitIsRefusedAndTheTaskEndsAsRedirectFailed() async {
        let harness = Harness(maximumRedirects: 1)
        let task = harness.task
        #expect(task.redirect(status: 302, to: "wss://example.test/1", headers: Self.original) != nil)
        #expect(task.redirect(status: 302, to: "wss://example.test/2", headers: Self.original) == nil)
        task.setResponse(status: 302, headers: ["Location": "/2"])  // URLSession then ends with the redirect
        task.complete(error: URLError(.badServerResponse))
        #expect(await harness.events() == [
            .redirected(302, "wss://example.test/1"), .ended(.redirectFailed(.tooMany(limit: 1), status: 302)),
        ])
    }

    @Test func aDowngradeOrALoopIsRefused() async {
        let downgrade = Harness(url: "wss://example.test/feed")
        #expect(downgrade.task.redirect(status: 301, to: "ws://example.test/feed", headers: Self.original) == nil)
        downgrade.task.setResponse(status: 301)
        downgrade.task.complete(error: URLError(.badServerResponse))
        #expect(await downgrade.events() == [.ended(.redirectFailed(.downgrade, status: 301))])

        let loop = Harness(url: "wss://example.test/a")
        #expect(loop.task.redirect(status: 302, to: "wss://example.test/b", headers: Self.original) != nil)
        #expect(loop.task.redirect(status: 302, to: "https://example.test/a", headers: Self.original) == nil)
        loop.task.complete(error: URLError(.badServerResponse))
        #expect(await loop.events() == [
            .redirected(302, "wss://example.test/b"), .ended(.redirectFailed(.loop, status: 302)),
        ])
    }

    @Test func withRedirectsOffTheRedirectIsTheAnswer() async {
        let harness = Harness(maximumRedirects: 0)
        #expect(harness.task.redirect(status: 308, to: "wss://example.test/new", headers: Self.original) == nil)
        harness.task.setResponse(status: 308, headers: ["Location": "/new"])
        harness.task.complete(error: URLError(.badServerResponse))
        #expect(await harness.events() == [.ended(.handshakeRejected(status: 308, retryAfter: nil))])
    }

    /// The session has one proxy setting for every hop: a hop the environment's `no_proxy` would route otherwise
    /// is refused rather than sent the wrong way.
    @Test func aHopWhoseProxyDiffersFromTheFirstURLsIsRefused() async {
        let variables = ["https_proxy": "http://proxy.test:3128", "no_proxy": "inside.test"]
        let harness = Harness(url: "wss://outside.test/feed", proxy: .variables(variables))
        let task = harness.task
        #expect(task.redirect(status: 302, to: "wss://elsewhere.test/feed", headers: Self.original) != nil)
        #expect(task.redirect(status: 302, to: "wss://inside.test/feed", headers: Self.original) == nil)
        task.complete(error: URLError(.badServerResponse))
        let detail = "the proxy for the new host differs from the first URL's"
        #expect(await harness.events() == [
            .redirected(302, "wss://elsewhere.test/feed"), .ended(.redirectFailed(.unsupported(detail), status: 302)),
        ])
    }
}
