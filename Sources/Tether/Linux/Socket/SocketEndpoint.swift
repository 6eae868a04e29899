#if os(Linux)
import Foundation
import TetherPOSIX
import TetherWire

/// Where a `SocketConnection` connects and what it sends there, derived from a `TransportRequest`.
struct SocketEndpoint: Sendable {
    /// The host to resolve: a name or an IP literal without brackets.
    let host: String
    let port: Int
    /// The upgrade request, with a fresh random key.
    let handshake: ClientHandshake
    /// For `wss://`: the TLS context (shared by every connection with the same options, and kept between them by
    /// the transport's keeper, so that a reconnect can resume the session).
    let tls: TLSContext?
    /// The proxy to tunnel through, if any: the TCP connection goes to it, TLS and the upgrade to `host`.
    let proxy: SocketProxy?

    /// Where the TCP connection goes: the proxy, or the origin.
    var connectHost: String { self.proxy?.host ?? self.host }
    var connectPort: Int { self.proxy?.port ?? self.port }

    /// Checks the request and builds its handshake. Nothing here touches the network.
    /// - Parameter contexts: where the TLS context comes from and is kept; nil: the process's shared context,
    ///   which lives only while a connection holds it.
    static func make(
        for request: TransportRequest, contexts: TLSContextKeeper? = nil
    ) -> Result<SocketEndpoint, SocketUnsupported> {
        let url = request.url
        let secure: Bool
        switch url.scheme?.lowercased() {
        case "ws"?:
            secure = false
        case "wss"?:
            secure = true
        case let scheme:
            return .failure(.scheme(scheme ?? ""))
        }
        guard var host = url.host(percentEncoded: false), !host.isEmpty else { return .failure(.missingHost) }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        let port = url.port ?? (secure ? 443 : 80)
        let proxy: SocketProxy?
        switch request.proxy {
        case .none:
            proxy = nil
        case .http(let given):
            proxy = .http(given)
        case .socks(let given):
            proxy = .socks(given)
        case .environment, .variables:
            let variables: [String: String] =
                if case .variables(let given) = request.proxy { given } else { ProcessInfo.processInfo.environment }
            switch ProxyEnvironment.decide(host: host, port: port, secure: secure, variables: variables) {
            case .direct: proxy = nil
            case .proxy(let named): proxy = .http(named)
            case .socks(let named): proxy = .socks(named)
            case .unsupported: return .failure(.proxyScheme)
            }
        }
        var target = url.path(percentEncoded: true)
        if target.isEmpty { target = "/" }
        if let query = url.query(percentEncoded: true) { target += "?" + query }
        var random = SystemRandomNumberGenerator()
        do {
            let handshake = try ClientHandshake(
                host: host,
                port: port,
                secure: secure,
                target: target,
                subprotocols: request.subprotocols,
                headers: request.headers + (request.compression.map { [$0.header] } ?? []),
                key: ClientHandshake.randomKey(using: &random)
            )
            var tls: TLSContext?
            if secure {
                do throws(TLSConfigurationError) {
                    let options = Self.clientOptions(request.tls)
                    if let contexts {
                        tls = try contexts.context(for: options)
                    } else {
                        tls = try TLSContext.sharedClient(options)
                    }
                } catch {
                    return .failure(.tlsConfiguration(error.description))
                }
            }
            return .success(SocketEndpoint(host: host, port: port, handshake: handshake, tls: tls, proxy: proxy))
        } catch {
            return .failure(.invalidRequest(Self.describe(error)))
        }
    }

    static func clientOptions(_ options: TLSOptions) -> TLSClientOptions {
        TLSClientOptions(
            additionalTrustRoots: options.additionalTrustRoots.map(\.source),
            pins: options.pins,
            insecureSkipVerification: options.insecureSkipVerification,
            sessionResumption: options.sessionResumption,
            clientIdentity: options.clientIdentity?.socketIdentity
        )
    }

    /// A description that names the field but never echoes a value (header values may hold credentials).
    private static func describe(_ error: WireUsageError) -> String {
        switch error {
        case .invalidHandshakeField(let field): "invalid \(field)"
        case .reservedHeader(let name): "the handshake sets header \(name) itself"
        case .invalidKeyLength, .controlPayloadTooLong, .invalidCloseCode, .closeReasonWithoutCode: "\(error)"
        }
    }
}

extension TLSOptions.Certificates {
    var source: PEMSource {
        switch self {
        case .pemFile(let path): .file(path)
        case .pem(let data): .bytes(Array(data))
        }
    }
}

extension TLSOptions.ClientIdentity {
    /// The identity as OpenSSL reads it.
    var socketIdentity: TLSClientIdentity {
        switch self.source {
        case .pem(let chain, let key):
            let privateKey: PEMSource =
                switch key {
                case .pemFile(let path): .file(path)
                case .pem(let data): .bytes(Array(data))
                }
            return TLSClientIdentity(
                certificateChain: chain.source, privateKey: privateKey, passphrase: self.passphrase)
        case .pkcs12(let archive):
            return TLSClientIdentity(pkcs12: .bytes(Array(archive)), passphrase: self.passphrase ?? "")
        }
    }

    /// Why `SocketTransport` cannot present this identity, or nil when it can (read, decrypted, and the key
    /// matching the certificate). Reads the files.
    var socketProblem: String? {
        do throws(TLSConfigurationError) {
            try TLSContext.check(self.socketIdentity)
            return nil
        } catch {
            return error.description
        }
    }
}
#endif
