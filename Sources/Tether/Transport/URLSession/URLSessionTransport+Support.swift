import Foundation

extension URLSessionTransport {
    /// Where the transport runs, as far as what it can honour goes.
    enum Platform: Sendable, CaseIterable {
        /// Apple platforms: Foundation hands the server's chain and the client-certificate question to the session's
        /// delegate, and takes an HTTP proxy in `connectionProxyDictionary`. `SocketTransport` does not exist there.
        case apple
        /// Linux: Foundation verifies inside libcurl and asks the delegate nothing; `SocketTransport` is the default.
        case linux

        /// The platform this build runs on.
        static var current: Platform {
            #if canImport(Security)
            .apple
            #else
            .linux
            #endif
        }
    }

    /// Refuses what this transport cannot honour on this platform (see the type's documentation).
    public func checkSupport(of request: TransportRequest) throws(WebSocketConfigurationError) {
        if let refusal = Self.unsupportedSetting(in: request, on: .current) {
            throw refusal
        }
    }

    /// The first setting of `request` this transport cannot honour on `platform`, in words a user of that platform
    /// can act on (SocketTransport is named only on Linux, the one platform that has it); nil when it honours them
    /// all. A proxy from the environment is resolved only when connecting: one that cannot be honoured then ends that
    /// connection (`URLSessionProxySettings`).
    static func unsupportedSetting(
        in request: TransportRequest, on platform: Platform
    ) -> WebSocketConfigurationError? {
        // On Linux every refusal says what to use instead; on Apple platforms what to change.
        let instead = platform == .linux ? " (use SocketTransport, the default on Linux)" : ""
        if request.compression != nil {
            // URLSession's WebSocket task offers no permessage-deflate parameters to choose or read back.
            return WebSocketConfigurationError(
                property: "compression",
                requirement: platform == .apple
                    ? "nil on Apple platforms: URLSessionTransport cannot negotiate permessage-deflate "
                        + "(compression is Linux-only today)"
                    : "nil with URLSessionTransport" + instead,
                value: "set")
        }
        if !request.tls.sessionResumption {
            return WebSocketConfigurationError(
                property: "tls.sessionResumption",
                requirement: "true with URLSessionTransport (the platform decides when TLS sessions resume)" + instead,
                value: "false")
        }
        if request.interface != nil {
            return WebSocketConfigurationError(
                property: "interface", requirement: "nil with URLSessionTransport (it binds to no interface)" + instead,
                value: "set")
        }
        switch platform {
        case .linux:
            if let refusal = Self.linuxRefusal(of: request, instead: instead) { return refusal }
        case .apple:
            if let refusal = Self.appleRefusal(of: request) { return refusal }
        }
        return nil
    }

    /// What Linux's Foundation cannot do with a WebSocket task: every TLS option, every proxy, a client identity.
    private static func linuxRefusal(of request: TransportRequest, instead: String) -> WebSocketConfigurationError? {
        let refused = "with URLSessionTransport on Linux, whose Foundation verifies inside libcurl" + instead
        if !request.tls.pins.isEmpty {
            return WebSocketConfigurationError(
                property: "tls.pins", requirement: "empty " + refused, value: "\(request.tls.pins.count) pins")
        }
        if !request.tls.additionalTrustRoots.isEmpty {
            return WebSocketConfigurationError(
                property: "tls.additionalTrustRoots", requirement: "empty " + refused,
                value: "\(request.tls.additionalTrustRoots.count) sources")
        }
        if request.tls.insecureSkipVerification {
            return WebSocketConfigurationError(
                property: "tls.insecureSkipVerification", requirement: "false " + refused, value: "true")
        }
        if request.tls.clientIdentity != nil {
            return WebSocketConfigurationError(
                property: "tls.clientIdentity", requirement: "nil " + refused, value: "set")
        }
        if request.proxy != .none {
            return WebSocketConfigurationError(
                property: "proxy", requirement: ".none " + refused, value: "\(request.proxy)")
        }
        return nil
    }

    /// What URLSession on Apple platforms cannot carry: a proxy's credentials, a SOCKS proxy, a PEM identity.
    private static func appleRefusal(of request: TransportRequest) -> WebSocketConfigurationError? {
        switch request.proxy {
        case .http(let proxy) where proxy.credentials != nil:
            return WebSocketConfigurationError(
                property: "proxy",
                requirement: "an HTTP proxy without credentials with URLSessionTransport (the session's proxy "
                    + "settings carry none)",
                value: proxy.description)
        case .socks(let proxy):
            return WebSocketConfigurationError(
                property: "proxy",
                requirement: ".http or .environment with URLSessionTransport: it reaches HTTP proxies only (SOCKS5 "
                    + "is Linux-only today)",
                value: proxy.description)
        case .none, .http, .environment, .variables:
            break
        }
        if let identity = request.tls.clientIdentity, case .pem = identity.source {
            return WebSocketConfigurationError(
                property: "tls.clientIdentity",
                requirement: "a PKCS#12 identity (ClientIdentity.pkcs12) with URLSessionTransport, which reads no PEM "
                    + "keys", value: "a PEM identity")
        }
        return nil
    }
}
