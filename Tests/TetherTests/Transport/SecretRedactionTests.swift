import Foundation
import Testing
@testable import Tether
#if os(Linux)
import TetherPOSIX
#endif

/// Every type that holds a secret shows none of it however Swift prints it: `description` (`String(describing:)`,
/// interpolation), `debugDescription` (`String(reflecting:)`), its mirror (walked to the leaves) and `dump` — alone,
/// inside an Optional, inside an Array and inside the configuration that carries it.
///
/// To cover a new type, add a `SecretHolder` to `holders`: the value, the secrets it holds, and the configurations
/// it can sit in.
@Suite struct SecretRedactionTests {
    /// One type that holds secrets, with the places it is found in.
    struct SecretHolder: CustomTestStringConvertible, Sendable {
        var name: String
        var value: any Sendable
        /// Strings none of which may appear in any rendering.
        var secrets: [String]
        /// The value inside each configuration that can carry it.
        var containers: [any Sendable]

        var testDescription: String { self.name }
    }

    static let user = "alice-user-7f3a"
    static let password = "hunter2-s3cr3t-91c"
    static let token = "Bearer tok-0ddba11-55e"
    static let queryToken = "q-t0ken-8d2e"
    static let url = URL(string: "wss://example.test/feed?token=\(queryToken)")!

    static var httpCredentials: HTTPProxy.Credentials { HTTPProxy.Credentials(user: user, password: password) }
    static var httpProxy: HTTPProxy { HTTPProxy(host: "proxy.test", port: 3128, credentials: httpCredentials) }
    static var socksProxy: SOCKSProxy { SOCKSProxy(host: "proxy.test", credentials: httpCredentials) }

    /// A client identity's secrets: the private key's text (the harness shows what a `Data` holds as text too), a
    /// PKCS#12 archive's bytes, and the passphrase.
    static let keyBody = "k3y-b0dy-4e1f0c"
    static let keyPEM = Data(
        "-----BEGIN ENCRYPTED PRIVATE KEY-----\n\(keyBody)\n-----END ENCRYPTED PRIVATE KEY-----\n".utf8)
    static let archive = Data("p12-arch1ve-9b7d".utf8)
    static let passphrase = "pa55phrase-c0ffee"
    static let identitySecrets = [
        keyBody, keyPEM.base64EncodedString(), "p12-arch1ve", archive.base64EncodedString(), passphrase,
    ]
    static let certificatePEM = Data("-----BEGIN CERTIFICATE-----\nc3rt\n-----END CERTIFICATE-----\n".utf8)

    static var pemIdentity: TLSOptions.ClientIdentity {
        .pem(certificateChain: .pem(certificatePEM), privateKey: .pem(keyPEM), passphrase: passphrase)
    }
    static var pemFileIdentity: TLSOptions.ClientIdentity {
        .pem(certificateChain: .pemFile("/etc/tether/client.pem"), privateKey: .pemFile("/etc/tether/client.key"),
             passphrase: passphrase)
    }
    static var pkcs12Identity: TLSOptions.ClientIdentity { .pkcs12(archive, passphrase: passphrase) }

    static func configuration(
        headers: [(name: String, value: String)] = [], proxy: ProxyConfiguration = .none,
        clientIdentity: TLSOptions.ClientIdentity? = nil
    ) -> WebSocketConfiguration {
        var configuration = WebSocketConfiguration(url: Self.url, headers: headers)
        configuration.proxy = proxy
        configuration.tls.clientIdentity = clientIdentity
        return configuration
    }

    static func request(
        headers: [(name: String, value: String)] = [], proxy: ProxyConfiguration = .none,
        clientIdentity: TLSOptions.ClientIdentity? = nil
    ) -> TransportRequest {
        TransportRequest(url: Self.url, headers: headers, tls: TLSOptions(clientIdentity: clientIdentity), proxy: proxy)
    }

    /// Each client identity with the places it sits in: its TLS options, the configuration, the transport's request.
    static func identityHolder(_ name: String, _ identity: TLSOptions.ClientIdentity) -> SecretHolder {
        SecretHolder(
            name: name, value: identity, secrets: identitySecrets,
            containers: [
                TLSOptions(clientIdentity: identity), configuration(clientIdentity: identity),
                request(clientIdentity: identity),
            ])
    }

    static let holders: [SecretHolder] = [
        SecretHolder(
            name: "HTTPProxy.Credentials", value: httpCredentials, secrets: [user, password],
            containers: [httpProxy, configuration(proxy: .http(httpProxy)), request(proxy: .http(httpProxy))]),
        SecretHolder(
            name: "HTTPProxy", value: httpProxy, secrets: [user, password],
            containers: [ProxyConfiguration.http(httpProxy), configuration(proxy: .http(httpProxy))]),
        SecretHolder(
            name: "SOCKSProxy", value: socksProxy, secrets: [user, password],
            containers: [ProxyConfiguration.socks(socksProxy), configuration(proxy: .socks(socksProxy))]),
        SecretHolder(
            name: "ProxyConfiguration.variables",
            value: ProxyConfiguration.variables([
                "https_proxy": "http://\(user):\(password)@proxy.test:3128", "API_KEY": password,
            ]),
            secrets: [user, password],
            containers: [
                configuration(proxy: .variables(["all_proxy": "http://\(user):\(password)@proxy.test:1"])),
                request(proxy: .variables(["ALL_PROXY": "http://\(user):\(password)@proxy.test:1"])),
            ]),
        SecretHolder(
            name: "WebSocketConfiguration (headers, URL query)",
            value: configuration(headers: [("Authorization", token)]), secrets: [token, queryToken], containers: []),
        SecretHolder(
            name: "TransportRequest (headers, URL query)",
            value: request(headers: [("Authorization", token)]), secrets: [token, queryToken], containers: []),
        SecretHolder(
            name: "ConnectionRequest (headers, URL query)",
            value: ConnectionRequest(url: Self.url, headers: [("Authorization", token)]), secrets: [token, queryToken],
            containers: []),
        SecretHolder(
            name: "HandshakeResult (the response headers kept)",
            value: HandshakeResult(subprotocol: "chat", headers: [("Set-Cookie", token)]), secrets: [token],
            containers: [ConnectionState(
                phase: .open, generation: 1, attempts: 0, retryAt: nil, failure: nil, lastRTT: nil, path: .available,
                handshake: HandshakeResult(headers: [("Set-Cookie", token)]))]),
        identityHolder("TLSOptions.ClientIdentity (PEM, encrypted key)", pemIdentity),
        identityHolder("TLSOptions.ClientIdentity (PEM files)", pemFileIdentity),
        identityHolder("TLSOptions.ClientIdentity (PKCS#12)", pkcs12Identity),
    ] + Self.socketHolders

    #if os(Linux)
    /// The socket transport's own identity type, which the transport builds from `TLSOptions.ClientIdentity`.
    static var socketHolders: [SecretHolder] {
        let pem = TLSClientIdentity(
            certificateChain: .bytes(Array(certificatePEM)), privateKey: .bytes(Array(keyPEM)), passphrase: passphrase)
        let archive = TLSClientIdentity(pkcs12: .bytes(Array(Self.archive)), passphrase: passphrase)
        return [(name: "TLSClientIdentity (PEM)", identity: pem), ("TLSClientIdentity (PKCS#12)", archive)].map {
            SecretHolder(
                name: $0.name, value: $0.identity, secrets: identitySecrets,
                containers: [TLSClientOptions(clientIdentity: $0.identity)])
        }
    }
    #else
    static var socketHolders: [SecretHolder] { [] }
    #endif

    /// Every way Swift renders `value` as text.
    static func renderings(of value: Any) -> [(how: String, text: String)] {
        var dumped = ""
        dump(value, to: &dumped)
        return [
            ("String(describing:)", String(describing: value)),
            ("String(reflecting:)", String(reflecting: value)),
            ("interpolation", "\(value)"),
            ("dump", dumped),
            ("Mirror", Self.walk(Mirror(reflecting: value))),
        ]
    }

    /// Every label and leaf of a mirror, depth first. Bytes (`Data`, `[UInt8]`) are shown as the text they hold, so
    /// that a key kept as bytes is found as well as one kept as a string.
    static func walk(_ mirror: Mirror, depth: Int = 0) -> String {
        guard depth < 12 else { return "" }
        return mirror.children.map { child in
            let nested = Mirror(reflecting: child.value)
            let leaf =
                if let data = child.value as? Data {
                    String(decoding: data, as: UTF8.self)
                } else if let bytes = child.value as? [UInt8] {
                    String(decoding: bytes, as: UTF8.self)
                } else {
                    nested.children.isEmpty ? String(describing: child.value) : ""
                }
            return "\(child.label ?? "_")=\(leaf){\(Self.walk(nested, depth: depth + 1))}"
        }.joined(separator: ";")
    }

    static func expectNoSecret(in value: Any, of holder: SecretHolder, where place: String) {
        for (how, text) in Self.renderings(of: value) {
            for secret in holder.secrets {
                #expect(!text.contains(secret), "\(holder.name) \(place), \(how) shows a secret:\n\(text)")
            }
        }
    }

    @Test(arguments: holders) func aSecretShowsInNoRendering(_ holder: SecretHolder) {
        Self.expectNoSecret(in: holder.value, of: holder, where: "alone")
        Self.expectNoSecret(in: Optional(holder.value) as Any, of: holder, where: "in an Optional")
        Self.expectNoSecret(in: [holder.value, holder.value], of: holder, where: "in an Array")
        for container in holder.containers {
            Self.expectNoSecret(in: container, of: holder, where: "in \(type(of: container))")
        }
    }

    /// The harness can fail: a plain struct holding the same secret is caught by every rendering.
    @Test func theHarnessFindsASecretThatIsNotRedacted() {
        struct Leaky { var password = SecretRedactionTests.password }
        let renderings = Self.renderings(of: [Leaky()])
        #expect(renderings.allSatisfy { $0.text.contains(Self.password) })
    }

    /// A key kept as bytes in a plain struct is found too (by the mirror walk: `dump` shows a `Data` as numbers).
    @Test func theHarnessFindsAKeyKeptAsBytes() {
        struct LeakyKey { var key = SecretRedactionTests.keyPEM }
        let mirror = Self.renderings(of: [LeakyKey()]).first { $0.how == "Mirror" }
        #expect(mirror?.text.contains(Self.keyBody) == true)
    }

    @Test func redactedRenderingsStillSayWhatIsThere() {
        #expect(Self.httpProxy.description == "http://proxy.test:3128 (with credentials)")
        let configuration = String(reflecting: Self.configuration(headers: [("Authorization", Self.token)]))
        #expect(configuration.contains("Authorization: (redacted)"))
        #expect(configuration.contains("wss://example.test/feed (redacted)"))
        let variables = ProxyConfiguration.variables(["https_proxy": "http://u:p@proxy.test:3128", "API_KEY": "k"])
        #expect(variables.description == "variables(API_KEY=(redacted), https_proxy=http://proxy.test:3128)")
        #expect("\(Self.pemIdentity)" == "ClientIdentity(PEM, key redacted, passphrase redacted)")
        #expect(String(reflecting: Self.pkcs12Identity) == "ClientIdentity(PKCS#12, key redacted, passphrase redacted)")
        // Where the certificate comes from is public and stays visible.
        #expect(Self.walk(Mirror(reflecting: Self.pemFileIdentity)).contains("/etc/tether/client.pem"))
    }
}
