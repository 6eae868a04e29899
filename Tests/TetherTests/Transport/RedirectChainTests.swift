import Foundation
import Testing
@testable import Tether
import TetherCore

/// The rules each hop of a redirect is checked by, for both transports: the `Location` resolved against the URL asked
/// last (RFC 9110 §10.2.2, RFC 3986 §5.4), `http`/`https` read as `ws`/`wss`, the limit, no downgrade, no loop, and
/// credentials for the first origin only.
@Suite struct RedirectChainTests {
    func chain(_ start: String, limit: Int = 5) -> RedirectChain {
        RedirectChain(start: URL(string: start)!, limit: limit)
    }

    func followed(_ chain: inout RedirectChain, _ location: String?) -> String? {
        guard case .follow(let url) = chain.follow(location: location) else { return nil }
        return url.absoluteString
    }

    /// RFC 3986 §5.4.1's normal examples, against its base URI with the `ws` scheme.
    @Test(arguments: [
        ("g", "ws://a/b/c/g"), ("./g", "ws://a/b/c/g"), ("g/", "ws://a/b/c/g/"), ("/g", "ws://a/g"),
        ("//g", "ws://g"), ("?y", "ws://a/b/c/d;p?y"), ("g?y", "ws://a/b/c/g?y"), ("g;x?y", "ws://a/b/c/g;x?y"),
        ("..", "ws://a/b/"), ("../g", "ws://a/b/g"), ("../..", "ws://a/"), ("../../g", "ws://a/g"),
        ("../../../g", "ws://a/g"), ("g#s", "ws://a/b/c/g"), ("//g:81/z", "ws://g:81/z"),
    ])
    func aRelativeLocationResolvesAgainstTheURLAskedLast(location: String, expected: String) {
        var chain = self.chain("ws://a/b/c/d;p?q")
        #expect(self.followed(&chain, location) == expected)
    }

    @Test func eachHopResolvesAgainstThePreviousOneNotTheFirst() {
        var chain = self.chain("ws://a.example/one/two")
        #expect(self.followed(&chain, "wss://b.example:8443/x/y") == "wss://b.example:8443/x/y")
        #expect(self.followed(&chain, "z?k=1") == "wss://b.example:8443/x/z?k=1")
        #expect(chain.hops == 2 && chain.current.absoluteString == "wss://b.example:8443/x/z?k=1")
    }

    @Test func httpAndHttpsAreReadAsWsAndWssAndUserInfoAndFragmentsAreNotKept() {
        var chain = self.chain("ws://a.example/")
        #expect(self.followed(&chain, "https://user:secret@b.example/feed#part") == "wss://b.example/feed")
        #expect(self.followed(&chain, "HTTPS://c.example/x") == "wss://c.example/x")
    }

    @Test func wssToWsIsRefusedAndWsToWssAllowed() {
        var chain = self.chain("ws://a.example/")
        #expect(self.followed(&chain, "wss://a.example/") == "wss://a.example/")
        #expect(chain.follow(location: "ws://a.example/plain") == .refuse(.downgrade))
        #expect(chain.follow(location: "http://a.example/plain") == .refuse(.downgrade))
        #expect(chain.hops == 1)  // a refusal follows nothing
    }

    @Test func aURLAskedBeforeIsALoopHoweverItIsSpelt() {
        var chain = self.chain("ws://A.example:80/a")
        #expect(self.followed(&chain, "/b") == "ws://A.example:80/b")
        #expect(chain.follow(location: "http://a.example/a") == .refuse(.loop))  // A → B → A
        var queries = self.chain("ws://a.example/a?x=1")
        #expect(self.followed(&queries, "/a?x=2") == "ws://a.example/a?x=2")  // another query: another URL
        #expect(queries.follow(location: "?x=1") == .refuse(.loop))
        var itself = self.chain("wss://a.example/a")
        #expect(itself.follow(location: "https://a.example:443/a") == .refuse(.loop))
    }

    @Test func theLimitCountsHopsFollowedAndZeroFollowsNone() {
        var chain = self.chain("ws://a.example/0", limit: 2)
        #expect(chain.follows)
        #expect(self.followed(&chain, "/1") != nil)
        #expect(self.followed(&chain, "/2") != nil)
        #expect(chain.follow(location: "/3") == .refuse(.tooMany(limit: 2)))
        #expect(chain.follow(location: nil) == .refuse(.tooMany(limit: 2)))  // the limit first: nothing is followed
        #expect(!self.chain("ws://a.example/", limit: 0).follows)
    }

    @Test(arguments: [
        (nil as String?, "missing"), ("", "missing"), ("ftp://b.example/", "scheme not ws, wss, http or https"),
        ("mailto:x@b.example", "scheme not ws, wss, http or https"), ("ws:///nohost", "no host"),
        ("ws://b.example:99999/", "port out of range"), ("ws://b.example:0/", "port out of range"),
    ])
    func aLocationThatCannotBeFollowedSaysWhyInFixedWords(location: String?, detail: String) {
        var chain = self.chain("ws://a.example/")
        #expect(chain.follow(location: location) == .refuse(.invalidLocation(detail)))
    }

    @Test func credentialsGoToTheFirstOriginOnlyAndStayBehindOnceLeft() {
        let headers = [
            (name: "Authorization", value: "Bearer t"), (name: "cookie", value: "s=1"), (name: "X-App", value: "7"),
        ]
        var chain = self.chain("wss://a.example/")
        #expect(self.followed(&chain, "/b") != nil)
        #expect(chain.headers(headers).map(\.name) == ["Authorization", "cookie", "X-App"])  // same origin
        #expect(self.followed(&chain, "wss://a.example:8443/c") != nil)  // another port: another origin
        #expect(chain.headers(headers).map(\.name) == ["X-App"])
        #expect(self.followed(&chain, "wss://a.example/d") != nil)  // back at the first origin: still left behind
        #expect(chain.headers(headers).map(\.name) == ["X-App"])
        var upgraded = self.chain("ws://a.example/")
        #expect(self.followed(&upgraded, "wss://a.example/") != nil)  // another scheme: another origin
        #expect(upgraded.headers(headers).map(\.name) == ["X-App"])
    }
}
