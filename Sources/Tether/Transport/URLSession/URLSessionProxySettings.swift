import Foundation
import TetherCore

/// A `ProxyConfiguration` as `URLSessionConfiguration.connectionProxyDictionary` takes it: the HTTP and HTTPS proxy
/// entries (CFNetwork's `kCFNetworkProxiesHTTP*` and `kCFNetworkProxiesHTTPS*` keys, spelled out because the
/// HTTPS ones are declared for macOS only, while their values are read on every Apple platform). Pure, so that the
/// mapping is tested on Linux.
enum URLSessionProxySettings {
    /// How one connection goes.
    enum Resolution: Sendable {
        /// No proxy: the session's configuration as given.
        case direct
        /// The session's `connectionProxyDictionary`.
        case proxy([String: any Sendable])
        /// The connection ends at once, this way.
        case refused(TransportEnd)
    }

    /// The dictionary for one connection to `url`, or none to connect directly; a proxy this transport cannot use
    /// ends the connection at once: one with credentials (the dictionary has no place for them) or one the environment
    /// names with another scheme than `http://` (SOCKS included), both as `.connectFailed(.unsupported)`, like `SocketTransport`'s
    /// answer to a proxy scheme it cannot speak.
    static func resolve(
        _ configuration: ProxyConfiguration, for url: URL,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> Resolution {
        switch Self.route(configuration, for: url, environment: environment) {
        case .direct: .direct
        case .proxy(let proxy): .proxy(Self.dictionary(for: proxy))
        case .refused(let end): .refused(end)
        }
    }

    /// How a connection to `url` goes, before it is spelled as a dictionary: compared between the first URL and a
    /// redirect's, since a session has one proxy setting for every hop.
    enum Route: Equatable, Sendable {
        case direct
        case proxy(HTTPProxy)
        case refused(TransportEnd)
    }

    /// See `resolve(_:for:environment:)`.
    static func route(
        _ configuration: ProxyConfiguration, for url: URL,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> Route {
        let proxy: HTTPProxy
        switch configuration {
        case .none:
            return .direct
        case .http(let given):
            proxy = given
        case .socks:
            // URLSessionTransport maps only HTTP proxies; a configured SOCKS proxy is refused when the client is
            // created (`checkSupport`), and this is the attempt's answer should one reach it.
            return .refused(.connectFailed(.unsupported))
        case .environment, .variables:
            let variables: [String: String]
            if case .variables(let given) = configuration { variables = given } else { variables = environment }
            let secure = ["wss", "https"].contains(url.scheme?.lowercased())
            let decision = ProxyEnvironment.decide(
                host: url.host ?? "", port: url.port ?? (secure ? 443 : 80), secure: secure, variables: variables)
            switch decision {
            case .direct: return .direct
            case .unsupported, .socks: return .refused(.connectFailed(.unsupported))
            case .proxy(let named): proxy = named
            }
        }
        guard proxy.credentials == nil else { return .refused(.connectFailed(.unsupported)) }
        return .proxy(proxy)
    }

    /// The proxy for both schemes: the session is the connection's own, so that `ws://` (HTTP) and `wss://`
    /// (HTTPS, tunnelled with CONNECT) go the same way.
    static func dictionary(for proxy: HTTPProxy) -> [String: any Sendable] {
        [
            "HTTPEnable": 1, "HTTPProxy": proxy.host, "HTTPPort": proxy.port,
            "HTTPSEnable": 1, "HTTPSProxy": proxy.host, "HTTPSPort": proxy.port,
        ]
    }
}
