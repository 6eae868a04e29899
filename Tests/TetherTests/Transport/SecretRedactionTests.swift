import Foundation
import Testing
@testable import Tether

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

    static func configuration(
        headers: [(name: String, value: String)] = [], proxy: ProxyConfiguration = .none
    ) -> WebSocketConfiguration {
        var configuration = WebSocketConfiguration(url: Self.url, headers: headers)
        configuration.proxy = proxy
        return configuration
    }

    static func request(
        headers: [(name: String, value: String)] = [], proxy: ProxyConfiguration = .none
    ) -> TransportRequest {
        TransportRequest(url: Self.url, headers: headers, proxy: proxy)
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
    ]

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

    /// Every label and leaf of a mirror, depth first.
    static func walk(_ mirror: Mirror, depth: Int = 0) -> String {
        guard depth < 12 else { return "" }
        return mirror.children.map { child in
            let nested = Mirror(reflecting: child.value)
            let leaf = nested.children.isEmpty ? String(describing: child.value) : ""
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

    @Test func redactedRenderingsStillSayWhatIsThere() {
        #expect(Self.httpProxy.description == "http://proxy.test:3128 (with credentials)")
        let configuration = String(reflecting: Self.configuration(headers: [("Authorization", Self.token)]))
        #expect(configuration.contains("Authorization: (redacted)"))
        #expect(configuration.contains("wss://example.test/feed (redacted)"))
        let variables = ProxyConfiguration.variables(["https_proxy": "http://u:p@proxy.test:3128", "API_KEY": "k"])
        #expect(variables.description == "variables(API_KEY=(redacted), https_proxy=http://proxy.test:3128)")
    }
}
