import Foundation

/// What a secret shows instead of itself in a description, a debug description or a mirror.
package let redacted = "(redacted)"

extension HTTPProxy.Credentials: CustomReflectable {
    /// The user name and password are secrets: the mirror names the fields and never shows them, so that `dump`
    /// and `String(reflecting:)` of anything holding credentials show nothing of them.
    public var customMirror: Mirror {
        Mirror(self, children: ["user": redacted, "password": redacted], displayStyle: .struct)
    }
}

extension HTTPProxy: CustomReflectable {
    public var customMirror: Mirror {
        Mirror(
            self, children: ["host": self.host, "port": self.port, "credentials": self.credentials as Any],
            displayStyle: .struct)
    }
}

extension ProxyConfiguration: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The variables of `.variables` are shown with any user info in their URLs removed, and only those that name
    /// proxies (`*_proxy`); others are counted.
    public var description: String {
        switch self {
        case .none: "none"
        case .http(let proxy): "http(\(proxy))"
        case .socks(let proxy): "socks(\(proxy))"
        case .environment: "environment"
        case .variables(let variables): "variables(\(Self.shown(variables)))"
        }
    }

    public var debugDescription: String { self.description }

    public var customMirror: Mirror {
        switch self {
        case .none, .environment: Mirror(self, children: [], displayStyle: .enum)
        case .http(let proxy): Mirror(self, children: ["http": proxy], displayStyle: .enum)
        case .socks(let proxy): Mirror(self, children: ["socks": proxy], displayStyle: .enum)
        case .variables(let variables):
            Mirror(self, children: ["variables": Self.shown(variables)], displayStyle: .enum)
        }
    }

    /// `name=value` for the proxy variables with user info cut from the value, in name order.
    private static func shown(_ variables: [String: String]) -> String {
        variables.keys.sorted().map { name in
            guard name.lowercased().hasSuffix("_proxy") else { return "\(name)=\(redacted)" }
            return "\(name)=\(Self.withoutUserInfo(variables[name]!))"
        }.joined(separator: ", ")
    }

    /// `scheme://user:password@host:port` becomes `scheme://host:port`; a value without `@` is kept.
    static func withoutUserInfo(_ value: String) -> String {
        guard let at = value.lastIndex(of: "@") else { return value }
        let afterScheme = value.range(of: "://").map { value[..<$0.upperBound] } ?? ""
        return String(afterScheme + value[value.index(after: at)...])
    }
}

/// The extra headers of a request or configuration as a mirror child: names shown, values never.
func redactedHeaders(_ headers: [(name: String, value: String)]) -> [String] {
    headers.map { "\($0.name): \(redacted)" }
}

/// A URL as logs show it: without user info, query or fragment.
func redactedURL(_ url: URL) -> String {
    guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return redacted }
    let hidden = components.user != nil || components.password != nil || components.query != nil
        || components.fragment != nil
    components.user = nil
    components.password = nil
    components.query = nil
    components.fragment = nil
    return (components.string ?? redacted) + (hidden ? " \(redacted)" : "")
}

extension TransportRequest: CustomReflectable {
    /// Header values, the URL's user info and query (tokens travel there) and proxy credentials are not shown.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "url": redactedURL(self.url),
                "headers": redactedHeaders(self.headers),
                "subprotocols": self.subprotocols,
                "maximumMessageSize": self.maximumMessageSize,
                "connectTimeout": self.connectTimeout,
                "closeTimeout": self.closeTimeout,
                "outboundWatermarks": self.outboundWatermarks,
                "tls": self.tls,
                "proxy": self.proxy,
                "compression": self.compression as Any,
                "responseHeaderNames": self.responseHeaderNames,
                "maximumRedirects": self.maximumRedirects,
            ],
            displayStyle: .struct)
    }
}

extension WebSocketConfiguration: CustomReflectable {
    /// Header values, the URL's user info and query (tokens travel there) and proxy credentials are not shown; nor is
    /// anything of a request provider or a greeting but whether there is one.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "url": redactedURL(self.url),
                "headers": redactedHeaders(self.headers),
                "subprotocols": self.subprotocols,
                "session": self.session,
                "maximumMessageSize": self.maximumMessageSize,
                "inboundWatermarks": self.inboundWatermarks,
                "outboundWatermarks": self.outboundWatermarks,
                "tls": self.tls,
                "proxy": self.proxy,
                "compression": self.compression as Any,
                "pathMonitoring": self.pathMonitoring,
                "timerTolerance": self.timerTolerance as Any,
                "greeting": self.greeting == nil ? "none" : "set",
                "requestProvider": self.requestProvider == nil ? "none" : "set",
                "responseHeaderNames": self.responseHeaderNames,
                "unconfirmedLimits": self.unconfirmedLimits,
                "maximumRedirects": self.maximumRedirects,
                "logSink": self.logSink.map { "level \($0.minimumLevel), capacity \($0.capacity)" } ?? "none",
                // The transport by its type: its object graph (an event loop, its tables and locks) is no part of
                // the settings, and `dump` walking it on a live shared loop took minutes in a test.
                "transport": String(describing: type(of: self.transport)),
            ],
            displayStyle: .struct)
    }
}
