import Foundation
import Testing
import TetherCore
@testable import Tether
import TetherTesting
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Every TLS and proxy setting with `URLSessionTransport`: taken into account, or refused with the property named
/// when the client is created, or (known only when connecting) ending that connection with a typed failure. Never
/// ignored.
@Suite struct URLSessionTransportSettingsTests {
    static let url = URL(string: "wss://feed.example.test/socket")!
    static let pin = "sha256/" + Data(repeating: 7, count: 32).base64EncodedString()
    static let proxy = HTTPProxy(host: "proxy.example.test", port: 3128)

    static func request(_ change: (inout TransportRequest) -> Void) -> TransportRequest {
        var request = TransportRequest(url: Self.url)
        change(&request)
        return request
    }

    static func refusal(_ request: TransportRequest, apple: Bool) -> String? {
        URLSessionTransport.unsupportedSetting(in: request, on: apple ? .apple : .linux)?.property
    }

    // MARK: Where the platform hands the chain to the delegate (Apple)

    @Test func onApplePlatformsTLSOptionsAndAPlainProxyAreTakenAndTheRestRefused() {
        #expect(Self.refusal(Self.request { _ in }, apple: true) == nil)
        #expect(Self.refusal(Self.request { $0.tls.pins = [Self.pin] }, apple: true) == nil)
        #expect(Self.refusal(Self.request { $0.tls.additionalTrustRoots = [.pemFile("/ca.pem")] }, apple: true) == nil)
        #expect(Self.refusal(Self.request { $0.tls.insecureSkipVerification = true }, apple: true) == nil)
        #expect(Self.refusal(Self.request { $0.proxy = .http(Self.proxy) }, apple: true) == nil)
        #expect(Self.refusal(Self.request { $0.proxy = .environment }, apple: true) == nil)
        var withCredentials = Self.proxy
        withCredentials.credentials = .init(user: "u", password: "secret")
        let refused = URLSessionTransport.unsupportedSetting(
            in: Self.request { $0.proxy = .http(withCredentials) }, on: .apple)
        #expect(refused?.property == "proxy")
        #expect(refused.map { !$0.description.contains("secret") } == true)
        #expect(Self.refusal(Self.request { $0.tls.sessionResumption = false }, apple: true) == "tls.sessionResumption")
    }

    /// The settings URLSession cannot carry on Apple platforms either are refused by name when the client is
    /// created: compression, a SOCKS proxy, a PEM identity (a PKCS#12 one is taken).
    @Test func onApplePlatformsCompressionSOCKSAndAPEMIdentityAreRefused() {
        #expect(Self.refusal(Self.request { $0.compression = .standard }, apple: true) == "compression")
        #expect(Self.refusal(
            Self.request { $0.proxy = .socks(SOCKSProxy(host: "socks.example.test", port: 1080)) }, apple: true)
            == "proxy")
        #expect(Self.refusal(Self.request {
            $0.tls.clientIdentity = .pem(certificateChain: .pemFile("/client.pem"), privateKey: .pemFile("/key.pem"))
        }, apple: true) == "tls.clientIdentity")
        #expect(Self.refusal(
            Self.request { $0.tls.clientIdentity = .pkcs12(Data([0x30]), passphrase: "p") }, apple: true) == nil)
        #expect(Self.refusal(Self.request { $0.interface = "en0" }, apple: true) == "interface")
    }

    /// Every refusal an Apple user can meet says what to change there, and none names SocketTransport, which does not
    /// exist on Apple platforms; on Linux each says to use it.
    @Test(arguments: URLSessionTransport.Platform.allCases)
    func eachRefusalSpeaksToItsPlatform(platform: URLSessionTransport.Platform) {
        let refused: [TransportRequest] = [
            Self.request { $0.compression = .standard },
            Self.request { $0.tls.sessionResumption = false },
            Self.request { $0.interface = "eth0" },
            Self.request { $0.proxy = .socks(SOCKSProxy(host: "socks.example.test", port: 1080)) },
            Self.request {
                $0.proxy = .http(HTTPProxy(host: "p.example.test", credentials: .init(user: "u", password: "secret")))
            },
            Self.request {
                $0.tls.clientIdentity = .pem(certificateChain: .pemFile("/c.pem"), privateKey: .pemFile("/k.pem"))
            },
            Self.request { $0.tls.pins = [Self.pin] },
            Self.request { $0.tls.clientIdentity = .pkcs12(Data([0x30]), passphrase: "p") },
            Self.request { $0.proxy = .environment },
        ]
        var count = 0
        for request in refused {
            guard let refusal = URLSessionTransport.unsupportedSetting(in: request, on: platform) else { continue }
            count += 1
            #expect(!refusal.description.contains("secret"))
            switch platform {
            case .apple: #expect(!refusal.description.contains("SocketTransport"), "\(refusal)")
            case .linux: #expect(refusal.description.contains("use SocketTransport"), "\(refusal)")
            }
        }
        #expect(count == (platform == .apple ? 6 : 9))
    }

    /// What the connection hands its session: the trust policy from the options, and the proxy dictionary.
    @Test func theConnectionsSessionGetsTheTrustPolicyAndTheProxy() {
        let factory = ScriptedWebSocketTaskFactory()
        let transport = URLSessionTransport(factory: factory, clock: ManualClock())
        _ = transport.connect(Self.request {
            $0.tls.pins = [Self.pin]
            $0.proxy = .http(Self.proxy)
        })
        let settings = factory.settings.first
        #expect(settings?.trust.pinnedDigests == [[UInt8](repeating: 7, count: 32)])
        #expect(settings?.trust.isPlatformDefault == false)
        #expect(settings?.proxy?["HTTPSProxy"] as? String == "proxy.example.test")
        #expect(settings?.proxy?["HTTPSPort"] as? Int == 3128)

        _ = transport.connect(Self.request { _ in })
        #expect(factory.settings.last?.trust.isPlatformDefault == true)
        #expect(factory.settings.last?.proxy == nil)
    }

    /// The bridge reports a refusal before the challenge is cancelled and the task completes as cancelled: the
    /// connection ends as `SocketTransport`'s does, `tls_failed` with the same detail, permanent.
    @Test func aRefusedServerEndsTheConnectionAsAPermanentTLSFailure() async {
        let factory = ScriptedWebSocketTaskFactory()
        let connection = URLSessionTransport(factory: factory, clock: ManualClock())
            .connect(Self.request { $0.tls.pins = [Self.pin] })
        factory.tasks[0].refuseServerTrust(.pinMismatch)
        factory.tasks[0].complete(error: URLError(.cancelled))
        var last: TransportEvent?
        for await event in connection.events { last = event }
        guard case .ended(let end)? = last else {
            Issue.record("no end")
            return
        }
        #expect(end == .tlsFailed(detail: "pin mismatch", permanent: true))
    }

    @Test func aProxyFromTheEnvironmentThatCannotBeUsedEndsTheConnection() async {
        let factory = ScriptedWebSocketTaskFactory()
        let connection = URLSessionTransport(factory: factory, clock: ManualClock())
            .connect(Self.request { $0.proxy = .variables(["https_proxy": "socks5://proxy.example.test:1080"]) })
        var last: TransportEvent?
        for await event in connection.events { last = event }
        guard case .ended(let end)? = last else {
            Issue.record("no end")
            return
        }
        #expect(end == .connectFailed(.unsupported))
        #expect(factory.tasks.isEmpty)  // nothing was started
    }

    // MARK: The proxy mapping

    @Test func aProxyBecomesTheHTTPAndHTTPSEntriesOfTheProxyDictionary() throws {
        let dictionary = URLSessionProxySettings.dictionary(for: Self.proxy)
        #expect(
            Set(dictionary.keys) == ["HTTPEnable", "HTTPProxy", "HTTPPort", "HTTPSEnable", "HTTPSProxy", "HTTPSPort"])
        #expect(dictionary["HTTPSEnable"] as? Int == 1 && dictionary["HTTPEnable"] as? Int == 1)
        #expect(dictionary["HTTPProxy"] as? String == "proxy.example.test")
        #expect(dictionary["HTTPPort"] as? Int == 3128)
    }

    @Test func theEnvironmentIsReadWithSocketTransportsRules() {
        func resolve(_ variables: [String: String], _ url: String = "wss://feed.example.test/")
            -> URLSessionProxySettings.Resolution
        {
            URLSessionProxySettings.resolve(.variables(variables), for: URL(string: url)!)
        }
        func proxy(_ resolution: URLSessionProxySettings.Resolution) -> [String: any Sendable]? {
            if case .proxy(let dictionary) = resolution { dictionary } else { nil }
        }
        func isDirect(_ resolution: URLSessionProxySettings.Resolution) -> Bool {
            if case .direct = resolution { true } else { false }
        }
        func refusal(_ resolution: URLSessionProxySettings.Resolution) -> TransportEnd? {
            if case .refused(let end) = resolution { end } else { nil }
        }
        #expect(isDirect(resolve([:])))
        #expect(isDirect(URLSessionProxySettings.resolve(.none, for: Self.url)))
        let https = proxy(resolve(["https_proxy": "http://secure.example.test:8443"]))
        #expect(https?["HTTPSProxy"] as? String == "secure.example.test" && https?["HTTPSPort"] as? Int == 8443)
        let plain = proxy(resolve(["http_proxy": "plain.example.test:3128"], "ws://feed.example.test/"))
        #expect(plain?["HTTPProxy"] as? String == "plain.example.test")
        #expect(isDirect(resolve(["https_proxy": "http://p:1", "no_proxy": ".example.test"])))
        // Credentials have no place in the dictionary; another scheme is not an HTTP proxy.
        #expect(refusal(resolve(["https_proxy": "http://user:pw@p.example.test:1"])) == .connectFailed(.unsupported))
        #expect(refusal(resolve(["https_proxy": "socks5://p.example.test:1"])) == .connectFailed(.unsupported))
    }

    // MARK: Where Foundation verifies inside libcurl (Linux)

    @Test func onLinuxEveryTLSOptionAndProxyIsRefusedByName() {
        #expect(Self.refusal(Self.request { _ in }, apple: false) == nil)
        #expect(Self.refusal(Self.request { $0.tls.pins = [Self.pin] }, apple: false) == "tls.pins")
        #expect(Self.refusal(Self.request { $0.tls.additionalTrustRoots = [.pemFile("/ca.pem")] }, apple: false)
            == "tls.additionalTrustRoots")
        #expect(Self.refusal(Self.request { $0.tls.insecureSkipVerification = true }, apple: false)
            == "tls.insecureSkipVerification")
        #expect(Self.refusal(Self.request { $0.proxy = .http(Self.proxy) }, apple: false) == "proxy")
        #expect(Self.refusal(Self.request { $0.proxy = .environment }, apple: false) == "proxy")
        #expect(
            Self.refusal(Self.request { $0.tls.sessionResumption = false }, apple: false) == "tls.sessionResumption")
        #expect(Self.refusal(
            Self.request { $0.tls.clientIdentity = .pkcs12(Data([0x30]), passphrase: "p") }, apple: false)
            == "tls.clientIdentity")
        #expect(Self.refusal(Self.request { $0.compression = .standard }, apple: false) == "compression")
    }

    #if os(Linux)
    /// The issue's case: pins with `URLSessionTransport` on Linux used to end in `connect_failed (unsupported)`, the
    /// pins never considered. Now the client is not created, and the error names the property.
    @Test func aClientWithPinsOnURLSessionTransportHereIsNotCreated() {
        var configuration = WebSocketClient.Configuration(
            url: Self.url, transport: URLSessionTransport())
        configuration.tls.pins = [Self.pin]
        #expect(throws: WebSocketConfigurationError.self) { try WebSocketClient(configuration: configuration) }
        do {
            _ = try WebSocketClient(configuration: configuration)
        } catch {
            #expect(error.property == "tls.pins")
        }
        configuration.tls.pins = []
        configuration.proxy = .http(Self.proxy)
        #expect(throws: WebSocketConfigurationError.self) { try configuration.validate() }
    }

    /// A client identity with `URLSessionTransport` on Linux was taken and never presented (Linux's Foundation asks
    /// the delegate nothing): now the client is not created.
    @Test func aClientIdentityOnURLSessionTransportHereIsRefused() {
        var configuration = WebSocketClient.Configuration(url: Self.url, transport: URLSessionTransport())
        configuration.tls.clientIdentity = .pkcs12(Data([0x30]), passphrase: "p")
        #expect(throws: WebSocketConfigurationError(
            property: "tls.clientIdentity",
            requirement: "nil with URLSessionTransport on Linux, whose Foundation verifies inside libcurl (use "
                + "SocketTransport, the default on Linux)",
            value: "set")) { try configuration.validate() }
    }

    /// `SocketTransport` honours them all (its TLS and proxy tests show them take effect): nothing is refused.
    @Test func socketTransportTakesEveryTLSOptionAndProxy() throws {
        var configuration = WebSocketClient.Configuration(url: Self.url, transport: SocketTransport())
        configuration.tls = TLSOptions(
            additionalTrustRoots: [.pemFile("/ca.pem")], pins: [Self.pin], insecureSkipVerification: true,
            sessionResumption: false)
        configuration.proxy = .http(HTTPProxy(host: "proxy.example.test", credentials: .init(user: "u", password: "p")))
        try configuration.validate()
    }
    #endif
}
