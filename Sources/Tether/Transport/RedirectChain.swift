import Foundation
import TetherCore

/// The redirects of one connection attempt: how many were followed, the URLs asked so far, and the rules each hop is
/// checked by (docs/ARCHITECTURE.md §4). Both transports keep one per connection: `SocketTransport` resolves the
/// `Location` itself, `URLSessionTransport` checks the request URLSession made from it.
///
/// A hop is followed when, in this order: fewer than `limit` hops were followed; the `Location` is there and resolves
/// against the URL asked last (RFC 9110 §10.2.2, RFC 3986 §5); its scheme is `ws` or `wss` (or `http`/`https`,
/// read as `ws`/`wss`, as the WHATWG WebSocket API reads them); it has a host and a port in 1...65535; it does not
/// go from `wss` to `ws`; and it was not asked before in this attempt. The URL followed has no user info and no
/// fragment (neither is sent).
struct RedirectChain: Sendable {
    /// The most hops followed in one attempt.
    let limit: Int
    /// The URL asked last.
    private(set) var current: URL
    /// Hops followed so far.
    private(set) var hops = 0
    /// Every URL asked in this attempt, as `Self.key` spells it.
    private var asked: Set<String>
    /// The first URL's origin (scheme, host, port).
    private let origin: Origin?
    /// Whether every hop so far stayed at the first URL's origin: credentials go only while they did.
    private(set) var stayedAtOrigin = true

    /// The request headers that carry credentials, which a hop to another origin does not send (as the Fetch
    /// standard and curl do): the app gave them for the first URL's server.
    static let credentialHeaders: Set<String> = ["authorization", "cookie"]

    init(start: URL, limit: Int) {
        self.limit = limit
        self.current = start
        self.origin = Origin(start)
        self.asked = Self.key(start).map { [$0] } ?? []
    }

    /// What to do with one redirect.
    enum Hop: Equatable, Sendable {
        /// Ask this URL next.
        case follow(URL)
        /// End the attempt.
        case refuse(RedirectFailure)
    }

    /// Whether redirects are followed at all (`limit` above 0); when not, a redirect ends the attempt as a rejection.
    var follows: Bool { self.limit > 0 }

    /// The request to `current` was redirected to `location` (the `Location` field as sent, nil when the response
    /// had none or several): the URL to ask next, or why not.
    mutating func follow(location: String?) -> Hop {
        guard self.hops < self.limit else { return .refuse(.tooMany(limit: self.limit)) }
        guard let location, !location.isEmpty else { return .refuse(.invalidLocation("missing")) }
        guard let resolved = URL(string: location, relativeTo: self.current)?.absoluteURL else {
            return .refuse(.invalidLocation("not a URI reference"))
        }
        return self.follow(to: resolved)
    }

    /// The request to `current` was redirected to `url`, already resolved (URLSession's new request): the URL to ask
    /// next, or why not.
    mutating func follow(to url: URL) -> Hop {
        guard self.hops < self.limit else { return .refuse(.tooMany(limit: self.limit)) }
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else {
            return .refuse(.invalidLocation("not a URI reference"))
        }
        switch components.scheme?.lowercased() {
        case "ws"?, "http"?: components.scheme = "ws"
        case "wss"?, "https"?: components.scheme = "wss"
        case _: return .refuse(.invalidLocation("scheme not ws, wss, http or https"))
        }
        guard let host = components.host, !host.isEmpty else { return .refuse(.invalidLocation("no host")) }
        if let port = components.port, !(1...65535).contains(port) {
            return .refuse(.invalidLocation("port out of range"))
        }
        if self.current.scheme?.lowercased() == "wss", components.scheme == "ws" { return .refuse(.downgrade) }
        components.user = nil
        components.password = nil
        components.fragment = nil
        guard let next = components.url, let key = Self.key(next) else {
            return .refuse(.invalidLocation("not a URI reference"))
        }
        guard self.asked.insert(key).inserted else { return .refuse(.loop) }
        self.hops += 1
        self.current = next
        if Origin(next) != self.origin { self.stayedAtOrigin = false }
        return .follow(next)
    }

    /// `headers` as the URL asked now gets them: without `credentialHeaders` once a hop left the first URL's origin.
    func headers(_ headers: [(name: String, value: String)]) -> [(name: String, value: String)] {
        guard !self.stayedAtOrigin else { return headers }
        return headers.filter { !Self.credentialHeaders.contains($0.name.lowercased()) }
    }

    /// What makes two URLs the same request: scheme, host (case-insensitive), port (the scheme's default spelled
    /// out), path and query, as sent (percent-encoded).
    static func key(_ url: URL) -> String? {
        guard let origin = Origin(url) else { return nil }
        let path = url.path(percentEncoded: true)
        let query = url.query(percentEncoded: true).map { "?" + $0 } ?? ""
        return "\(origin.scheme)://\(origin.host):\(origin.port)\(path.isEmpty ? "/" : path)\(query)"
    }

    /// Scheme, host and port (RFC 6454), the scheme's default port spelled out.
    struct Origin: Hashable, Sendable {
        let scheme: String
        let host: String
        let port: Int

        init?(_ url: URL) {
            guard let scheme = url.scheme?.lowercased(), var host = url.host(percentEncoded: false)?.lowercased(),
                !host.isEmpty
            else { return nil }
            if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            self.scheme = scheme
            self.host = host
            self.port = url.port ?? (scheme == "wss" || scheme == "https" ? 443 : 80)
        }
    }
}
