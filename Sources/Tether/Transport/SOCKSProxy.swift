import Foundation

/// A SOCKS5 proxy (RFC 1928) that `SocketTransport` tunnels through, for `ws://` and `wss://` alike (TLS to the
/// origin runs inside the tunnel, verified against the origin's host name).
///
/// Its credentials (username/password, RFC 1929) are sent to the proxy and nowhere else: `description`,
/// `debugDescription` and the mirror never show them, and no record, log line or error carries them.
public struct SOCKSProxy: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var host: String
    public var port: Int
    /// Who resolves the origin's name: the proxy (`socks5h://`, the default, as curl means it) or the client
    /// (`socks5://`: the proxy is sent the first address the client resolved).
    public var proxyResolvesNames: Bool
    /// Username/password authentication; the same type as an HTTP proxy's.
    public var credentials: HTTPProxy.Credentials?

    public init(
        host: String, port: Int = 1080, proxyResolvesNames: Bool = true, credentials: HTTPProxy.Credentials? = nil
    ) {
        self.host = host
        self.port = port
        self.proxyResolvesNames = proxyResolvesNames
        self.credentials = credentials
    }

    /// A proxy from `socks5://[user:password@]host[:port]` or `socks5h://...` (user info percent-decoded; the
    /// port defaults to 1080). Nil for any other scheme or without a host.
    public init?(url text: String) {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
            scheme == "socks5" || scheme == "socks5h", var host = components.host, !host.isEmpty
        else { return nil }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        self.host = host
        self.port = components.port ?? 1080
        self.proxyResolvesNames = scheme == "socks5h"
        if let user = components.user {
            self.credentials = HTTPProxy.Credentials(
                user: user.removingPercentEncoding ?? user,
                password: components.password.map { $0.removingPercentEncoding ?? $0 } ?? "")
        }
    }

    /// `socks5h://HOST:PORT` (or `socks5://`), and whether credentials are set, never what they are.
    public var description: String {
        let host = self.host.contains(":") ? "[\(self.host)]" : self.host
        let scheme = self.proxyResolvesNames ? "socks5h" : "socks5"
        return "\(scheme)://\(host):\(self.port)" + (self.credentials == nil ? "" : " (with credentials)")
    }

    public var debugDescription: String { self.description }

    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "host": self.host, "port": self.port, "proxyResolvesNames": self.proxyResolvesNames,
                "credentials": self.credentials as Any,
            ],
            displayStyle: .struct)
    }
}
