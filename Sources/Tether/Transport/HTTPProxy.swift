import Foundation

/// An HTTP proxy that `SocketTransport` tunnels through with `CONNECT`, for `ws://` and `wss://` alike (TLS to the
/// origin runs inside the tunnel, verified against the origin's host name).
///
/// Its credentials are sent to the proxy (Basic authentication) and nowhere else: `description` and
/// `debugDescription` never show them, and no record, log line or error carries them.
public struct HTTPProxy: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    public var host: String
    public var port: Int
    /// Basic authentication: the user name and password.
    public var credentials: Credentials?

    public struct Credentials: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
        public var user: String
        public var password: String

        public init(user: String, password: String) {
            self.user = user
            self.password = password
        }

        public var description: String { "(credentials)" }
        public var debugDescription: String { self.description }
    }

    public init(host: String, port: Int = 8080, credentials: Credentials? = nil) {
        self.host = host
        self.port = port
        self.credentials = credentials
    }

    /// A proxy from a URL such as `http://user:password@proxy.example:3128` (user info percent-decoded) or a bare
    /// `proxy.example:3128`; the port defaults to 80. Nil for any other scheme (`https://`, `socks5://`) or without a
    /// host.
    public init?(url text: String) {
        let withScheme = text.contains("://") ? text : "http://" + text
        guard let components = URLComponents(string: withScheme), components.scheme?.lowercased() == "http",
            var host = components.host, !host.isEmpty
        else { return nil }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        self.host = host
        self.port = components.port ?? 80
        if let user = components.user {
            self.credentials = Credentials(
                user: user.removingPercentEncoding ?? user,
                password: components.password.map { $0.removingPercentEncoding ?? $0 } ?? "")
        }
    }

    /// `http://HOST:PORT`, and whether credentials are set, never what they are.
    public var description: String {
        let host = self.host.contains(":") ? "[\(self.host)]" : self.host
        return "http://\(host):\(self.port)" + (self.credentials == nil ? "" : " (with credentials)")
    }

    public var debugDescription: String { self.description }
}

/// Whether and how connections go through a proxy. Default `.none`.
public enum ProxyConfiguration: Sendable, Hashable {
    /// Connect directly.
    case none
    /// Every connection goes through this HTTP proxy.
    case http(HTTPProxy)
    /// Every connection goes through this SOCKS5 proxy.
    case socks(SOCKSProxy)
    /// The conventional environment variables of the process, read at each connection: `https_proxy` for `wss://`,
    /// `http_proxy` for `ws://`, else `all_proxy` (each in lower or upper case, lower first), except for hosts that
    /// `no_proxy` lists. `no_proxy` is comma-separated: `*`; domain suffixes such as `example.com` or
    /// `.example.com`; IP addresses; each of these optionally with `:port`; and CIDR ranges such as `10.0.0.0/8`
    /// or `fd00::/8` (no port), which match a URL whose host is an address in the range: an IPv4 range also
    /// matches the IPv4-mapped IPv6 form of its addresses (`::ffff:10.1.2.3`), and a host name never matches a
    /// range, whatever it resolves to. An entry that does not parse (`10.0.0.0/33`) matches nothing. A variable
    /// may name an `http://` proxy (the scheme may be left out) or a SOCKS5 one (`socks5://`, `socks5h://`).
    case environment
    /// The same rules as `.environment`, applied to these variables instead of the process's.
    case variables([String: String])
}

/// Picks the proxy for a URL from environment variables (see `ProxyConfiguration.environment`).
enum ProxyEnvironment {
    /// What the variables say for `host`, reached with `secure` (wss) or not.
    enum Decision: Equatable {
        case direct
        case proxy(HTTPProxy)
        case socks(SOCKSProxy)
        /// A proxy variable applies but names a proxy `SocketTransport` cannot use (`https://`, `socks4://`).
        case unsupported
    }

    static func decide(host: String, port: Int, secure: Bool, variables: [String: String]) -> Decision {
        func value(_ name: String) -> String? {
            for key in [name, name.uppercased()] {
                if let value = variables[key]?.trimmingCharacters(in: .whitespaces), !value.isEmpty { return value }
            }
            return nil
        }
        guard let setting = value(secure ? "https_proxy" : "http_proxy") ?? value("all_proxy") else { return .direct }
        if let bypass = value("no_proxy"), Self.bypasses(host: host, port: port, noProxy: bypass) { return .direct }
        if let socks = SOCKSProxy(url: setting) { return .socks(socks) }
        guard let proxy = HTTPProxy(url: setting) else { return .unsupported }
        return .proxy(proxy)
    }

    /// Whether `no_proxy` lists `host` (case-insensitive; a trailing dot ignored); an entry that does not parse
    /// matches nothing and is no error.
    static func bypasses(host: String, port: Int, noProxy: String) -> Bool {
        let host = Self.normalized(host)
        for rawEntry in noProxy.split(separator: ",") {
            var entry = rawEntry.trimmingCharacters(in: .whitespaces).lowercased()
            if entry.isEmpty { continue }
            if entry == "*" { return true }
            if entry.contains("/") {
                // A CIDR range: it matches addresses only, and takes no port.
                if AddressRange(entry)?.contains(host: host) == true { return true }
                continue
            }
            // An optional port: `host:port`, `[v6]:port`; a bare IPv6 address has several colons and no port.
            if entry.hasPrefix("[") {
                guard let close = entry.firstIndex(of: "]") else { continue }
                let rest = entry[entry.index(after: close)...]
                if rest.hasPrefix(":"), Int(rest.dropFirst()) != port { continue }
                entry = String(entry[entry.index(after: entry.startIndex)..<close])
            } else if entry.filter({ $0 == ":" }).count == 1, let colon = entry.firstIndex(of: ":") {
                guard Int(entry[entry.index(after: colon)...]) == port else { continue }
                entry = String(entry[..<colon])
            }
            entry = Self.normalized(entry)
            if entry.hasPrefix(".") { entry.removeFirst() }
            if entry.isEmpty { continue }
            // A domain matches itself and its subdomains; an address only itself.
            if host == entry || (!Self.isAddress(host) && !Self.isAddress(entry) && host.hasSuffix("." + entry)) {
                return true
            }
        }
        return false
    }

    private static func isAddress(_ host: String) -> Bool {
        host.contains(":") || host.allSatisfy { $0.isASCII && ($0.isNumber || $0 == ".") }
    }

    private static func normalized(_ host: String) -> String {
        var host = host.lowercased()
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host.hasSuffix(".") { host.removeLast() }
        return host
    }
}
