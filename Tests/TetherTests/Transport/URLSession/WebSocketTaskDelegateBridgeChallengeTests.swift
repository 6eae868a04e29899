import Foundation
import Synchronization
import Testing
import TetherCore
@testable import Tether
import TetherTesting
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The authentication challenges URLSession hands the session's delegate, answered by `WebSocketTaskDelegateBridge`
/// over scripted `ChallengeCredentials` (the Security calls), through both of URLSession's entry points: the
/// session-level method, which gets every session-level challenge (server trust, client certificate) whenever the
/// delegate implements it, and the task-level one. The bridge reports to a real `URLSessionConnection` over a
/// scripted task, as `FoundationWebSocketTaskFactory` wires them.
@Suite struct WebSocketTaskDelegateBridgeChallengeTests {
    static let url = URL(string: "wss://feed.example.test/socket")!
    static let pin = "sha256/" + Data(repeating: 7, count: 32).base64EncodedString()
    static let identity = TLSOptions.ClientIdentity.pkcs12(Data([0x30, 0x82]), passphrase: "p12 pass")

    /// URLSession's two delegate methods for challenges.
    enum EntryPoint: CaseIterable {
        case session
        case task
    }

    /// What the completion handler was given; the credential by the name the scripted credentials gave it.
    struct Answer: Equatable {
        var disposition: URLSession.AuthChallengeDisposition
        var credential: String?
    }

    /// A connection over a scripted task, and the bridge `FoundationWebSocketTaskFactory` would give its session.
    struct Harness {
        let factory = ScriptedWebSocketTaskFactory()
        let connection: any TransportConnection
        let bridge: WebSocketTaskDelegateBridge
        let credentials: ScriptedChallengeCredentials
        let session = URLSession(configuration: .ephemeral)

        init(tls: TLSOptions, credentials: ScriptedChallengeCredentials = ScriptedChallengeCredentials()) {
            var request = TransportRequest(url: WebSocketTaskDelegateBridgeChallengeTests.url)
            request.tls = tls
            self.connection = URLSessionTransport(factory: self.factory, clock: ManualClock()).connect(request)
            let settings = self.factory.settings[0]
            self.credentials = credentials
            self.bridge = WebSocketTaskDelegateBridge(
                self.factory.tasks[0].delegate, trust: settings.trust, host: "feed.example.test",
                clientIdentity: settings.clientIdentity, credentials: credentials)
        }

        /// Hands `kind` of challenge to the bridge through `entry`, as URLSession would.
        func ask(_ kind: ChallengeKind, through entry: EntryPoint) -> Answer? {
            let challenge = ScriptedChallengeCredentials.challenge(kind)
            let answer = Mutex<Answer?>(nil)
            let completion: @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void = {
                disposition, credential in
                answer.withLock { $0 = Answer(disposition: disposition, credential: credential?.user) }
            }
            switch entry {
            case .session:
                self.bridge.urlSession(self.session, didReceive: challenge, completionHandler: completion)
            case .task:
                let task = self.session.webSocketTask(with: WebSocketTaskDelegateBridgeChallengeTests.url)
                self.bridge.urlSession(self.session, task: task, didReceive: challenge, completionHandler: completion)
            }
            return answer.withLock { $0 }
        }

        /// The task completes as cancelled (what URLSession does after a cancelled challenge); the connection's end.
        func end() async -> TransportEnd? {
            self.factory.tasks[0].complete(error: URLError(.cancelled))
            var last: TransportEvent?
            for await event in self.connection.events { last = event }
            guard case .ended(let end)? = last else { return nil }
            return end
        }
    }

    // MARK: Mutual TLS

    /// The session-level method presents the client identity: URLSession never asks the task-level one about a
    /// client certificate when the delegate implements the session-level one (the identity was never presented).
    @Test(arguments: EntryPoint.allCases)
    func aClientCertificateChallengeIsAnsweredWithTheIdentity(entry: EntryPoint) {
        let harness = Harness(tls: TLSOptions(clientIdentity: Self.identity))
        #expect(harness.ask(.clientCertificate, through: entry) == Answer(
            disposition: .useCredential, credential: ScriptedChallengeCredentials.identityCredential))
        #expect(harness.credentials.identitiesPresented == [Self.identity])
    }

    @Test(arguments: EntryPoint.allCases)
    func withoutAnIdentityTheServerDecides(entry: EntryPoint) {
        let harness = Harness(tls: TLSOptions())
        #expect(harness.ask(.clientCertificate, through: entry) == Answer(disposition: .performDefaultHandling))
        #expect(harness.credentials.identitiesPresented.isEmpty)
    }

    @Test(arguments: EntryPoint.allCases)
    func anIdentityThatCannotBePresentedEndsTheConnectionAsAPermanentTLSFailure(entry: EntryPoint) async {
        let credentials = ScriptedChallengeCredentials(identityProblem: ClientIdentityProblem("the keychain said no"))
        let harness = Harness(tls: TLSOptions(clientIdentity: Self.identity), credentials: credentials)
        #expect(harness.ask(.clientCertificate, through: entry) == Answer(disposition: .cancelAuthenticationChallenge))
        #expect(await harness.end() == .tlsFailed(
            detail: "client identity unusable: the keychain said no", permanent: true))
    }

    // MARK: Server trust

    @Test(arguments: EntryPoint.allCases)
    func withTheDefaultTLSOptionsTheServersChainIsLeftToThePlatform(entry: EntryPoint) {
        let harness = Harness(tls: TLSOptions())
        #expect(harness.ask(.serverTrust, through: entry) == Answer(disposition: .performDefaultHandling))
        #expect(harness.credentials.trustEvaluations == 0)
    }

    @Test(arguments: EntryPoint.allCases)
    func aChainThatPassesThePinsIsAccepted(entry: EntryPoint) {
        let harness = Harness(tls: TLSOptions(pins: [Self.pin]))
        #expect(harness.ask(.serverTrust, through: entry) == Answer(
            disposition: .useCredential, credential: ScriptedChallengeCredentials.trustCredential))
        #expect(harness.credentials.trustEvaluations == 1)
    }

    @Test(arguments: EntryPoint.allCases)
    func aRefusedChainEndsTheConnectionWithTheReason(entry: EntryPoint) async {
        let credentials = ScriptedChallengeCredentials(trustFailure: .pinMismatch)
        let harness = Harness(tls: TLSOptions(pins: [Self.pin]), credentials: credentials)
        #expect(harness.ask(.serverTrust, through: entry) == Answer(disposition: .cancelAuthenticationChallenge))
        #expect(await harness.end() == .tlsFailed(detail: "pin mismatch", permanent: true))
    }

    @Test(arguments: EntryPoint.allCases)
    func aChallengeWithoutAChainIsLeftToThePlatform(entry: EntryPoint) {
        let credentials = ScriptedChallengeCredentials(trustCarried: false)
        let harness = Harness(tls: TLSOptions(pins: [Self.pin]), credentials: credentials)
        #expect(harness.ask(.serverTrust, through: entry) == Answer(disposition: .performDefaultHandling))
    }

    /// URLSession follows a redirect after asking the bridge; the next server's certificate must then name the next
    /// host, not the first URL's (with pins or extra roots, the evaluation is the bridge's).
    @Test func afterARedirectToAnotherHostTheCertificateMustNameThatHost() async {
        let harness = Harness(tls: TLSOptions(pins: [Self.pin]))
        #expect(harness.ask(.serverTrust, through: .session)?.disposition == .useCredential)
        let task = harness.session.webSocketTask(with: Self.url)
        let response = HTTPURLResponse(url: Self.url, statusCode: 302, httpVersion: "HTTP/1.1", headerFields: [:])!
        /// Asks the bridge about a redirect to `url`, as URLSession does; the URL it follows, nil for a refusal.
        func redirect(to url: String) -> URL? {
            let followed = Mutex<URL?>(nil)
            harness.bridge.urlSession(
                harness.session, task: task, willPerformHTTPRedirection: response,
                newRequest: URLRequest(url: URL(string: url)!)
            ) { request in
                let url = request?.url
                followed.withLock { $0 = url }
            }
            return followed.withLock { $0 }
        }
        #expect(redirect(to: "wss://other.example.test/socket") == URL(string: "wss://other.example.test/socket")!)
        #expect(harness.ask(.serverTrust, through: .task)?.disposition == .useCredential)
        #expect(harness.credentials.hostsRequired == ["feed.example.test", "other.example.test"])
        // A refused hop changes nothing: the task ends with the redirect.
        #expect(redirect(to: "ws://third.example.test/socket") == nil)
        #expect(harness.bridge.host == "other.example.test")
        #expect(await harness.end() == .redirectFailed(.downgrade, status: 302))
    }

    // MARK: Everything else

    @Test(arguments: EntryPoint.allCases)
    func otherChallengesAreLeftToThePlatform(entry: EntryPoint) {
        let harness = Harness(tls: TLSOptions(pins: [Self.pin], clientIdentity: Self.identity))
        #expect(harness.ask(.other, through: entry) == Answer(disposition: .performDefaultHandling))
        #expect(harness.credentials.trustEvaluations == 0)
        #expect(harness.credentials.identitiesPresented.isEmpty)
    }

    /// Linux's Foundation asks no certificate questions, and the bridge there has no credentials to answer with.
    @Test func withoutPlatformCredentialsEveryChallengeIsLeftToThePlatform() {
        let bridge = WebSocketTaskDelegateBridge(
            NoDelegate(), trust: ServerTrustPolicy(TLSOptions(pins: [Self.pin])), host: "feed.example.test",
            clientIdentity: Self.identity, credentials: nil)
        for kind in [ChallengeKind.serverTrust, .clientCertificate, .other] {
            let (disposition, credential) = bridge.answer(ScriptedChallengeCredentials.challenge(kind))
            #expect(disposition == .performDefaultHandling && credential == nil)
        }
        #if !canImport(Security)
        #expect(FoundationWebSocketTaskFactory.platformCredentials == nil)
        #endif
    }
}

/// A delegate that ignores every callback.
private final class NoDelegate: WebSocketTaskDelegate {
    func taskDidOpen(subprotocol: String?) {}
    func taskDidClose(code: Int, reason: Data?) {}
    func taskDidRefuseChallenge(_ refusal: ChallengeRefusal) {}
    func taskWillRedirect(status: Int, to request: URLRequest) -> URLRequest? { nil }
    func taskDidComplete(error: (any Error)?) {}
    func taskDidCollectMetrics(_ times: URLSessionTransactionTimes, at end: Date) {}
}

/// `ChallengeCredentials` played by the test: a challenge's kind is read from its protection space's method (a name
/// the test gives), the server's chain passes or fails as scripted, and the identity becomes a credential or a
/// problem as scripted. Credentials are told apart by their user name.
final class ScriptedChallengeCredentials: ChallengeCredentials {
    static let trustCredential = "accepted server trust"
    static let identityCredential = "client identity"

    private let trustFailure: ServerTrustFailure?
    private let trustCarried: Bool
    private let identityProblem: ClientIdentityProblem?
    private let record = Mutex<(trustEvaluations: Int, identities: [TLSOptions.ClientIdentity], hosts: [String])>(
        (0, [], []))

    init(
        trustFailure: ServerTrustFailure? = nil, trustCarried: Bool = true, identityProblem: ClientIdentityProblem? = nil
    ) {
        self.trustFailure = trustFailure
        self.trustCarried = trustCarried
        self.identityProblem = identityProblem
    }

    var trustEvaluations: Int { self.record.withLock { $0.trustEvaluations } }
    var identitiesPresented: [TLSOptions.ClientIdentity] { self.record.withLock { $0.identities } }
    /// The host name each server-trust evaluation required.
    var hostsRequired: [String] { self.record.withLock { $0.hosts } }

    /// A challenge whose protection space names `kind` (by a name only these credentials read).
    static func challenge(_ kind: ChallengeKind) -> URLAuthenticationChallenge {
        let space = URLProtectionSpace(
            host: "feed.example.test", port: 443, protocol: "https", realm: nil,
            authenticationMethod: "scripted.\(kind)")
        return URLAuthenticationChallenge(
            protectionSpace: space, proposedCredential: nil, previousFailureCount: 0, failureResponse: nil, error: nil,
            sender: ChallengeSender())
    }

    func kind(of challenge: URLAuthenticationChallenge) -> ChallengeKind {
        switch challenge.protectionSpace.authenticationMethod {
        case "scripted.serverTrust": .serverTrust
        case "scripted.clientCertificate": .clientCertificate
        default: .other
        }
    }

    func serverTrustCredential(
        for challenge: URLAuthenticationChallenge, host: String, policy: ServerTrustPolicy
    ) -> Result<URLCredential, ServerTrustFailure>? {
        guard self.trustCarried else { return nil }
        self.record.withLock { record in
            record.trustEvaluations += 1
            record.hosts.append(host)
        }
        if let trustFailure = self.trustFailure { return .failure(trustFailure) }
        return .success(URLCredential(user: Self.trustCredential, password: "", persistence: .none))
    }

    func clientCredential(
        presenting identity: TLSOptions.ClientIdentity
    ) -> Result<URLCredential, ClientIdentityProblem> {
        self.record.withLock { $0.identities.append(identity) }
        if let identityProblem = self.identityProblem { return .failure(identityProblem) }
        return .success(URLCredential(user: Self.identityCredential, password: "", persistence: .forSession))
    }
}

/// The sender a challenge must have; the bridge answers through the completion handler, never through it.
private final class ChallengeSender: NSObject, URLAuthenticationChallengeSender {
    func use(_ credential: URLCredential, for challenge: URLAuthenticationChallenge) {}
    func continueWithoutCredential(for challenge: URLAuthenticationChallenge) {}
    func cancel(_ challenge: URLAuthenticationChallenge) {}
    func performDefaultHandling(for challenge: URLAuthenticationChallenge) {}
    func rejectProtectionSpaceAndContinue(with challenge: URLAuthenticationChallenge) {}
}
