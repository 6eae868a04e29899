#if os(Linux)
import Foundation
import Testing
@testable import Tether
import TetherCore
import TetherPOSIX
import TetherTestServer
import TetherTesting

/// The client against a test server that requires a client certificate (mutual TLS), over loopback: the server
/// records the subject it accepted; a missing or refused certificate stops the session with a typed `tls_failed`
/// and no retry, on TLS 1.2 (refused in the handshake) and TLS 1.3 (refused after it, on the first read).
@Suite(.timeLimit(.minutes(1)))
struct WebSocketClientMutualTLSTests {
    static let serverAuthority = TestCertificateAuthority()
    static let clientAuthority = TestCertificateAuthority(commonName: "Tether Client CA")
    static let serverCertificate = Self.serverAuthority.issue()

    private func server(tls12: Bool) throws -> TestServer {
        var options = Self.serverCertificate
            .serverTLS(requiringClientCertificatesFrom: Self.clientAuthority.certificate).options
        options.tls12OnlyForTesting = tls12
        return try TestServer(configuration: .init(tls: TestServerTLS(options)), scenario: .echo)
    }

    private func configuration(_ server: TestServer, identity: TestCertificate?) -> WebSocketConfiguration {
        var configuration = WebSocketConfiguration(
            url: URL(string: "wss://127.0.0.1:\(server.port)/")!, heartbeatInterval: .seconds(5),
            // Generous: a loaded machine must not turn a refusal into a connect timeout (and a retry).
            heartbeatTimeout: .seconds(5), connectTimeout: .seconds(30), pathMonitoring: .none)
        configuration.backoff = BackoffPolicy(
            base: .milliseconds(50), factor: 1, cap: .milliseconds(50), jitterPercent: 0)
        configuration.tls = TLSOptions(
            additionalTrustRoots: [.pem(Data(Self.serverAuthority.certificate.certificatePEM))],
            clientIdentity: identity.map {
                .pem(certificateChain: .pem(Data($0.certificatePEM)), privateKey: .pem(Data($0.privateKeyPEM)))
            })
        return configuration
    }

    @Test(arguments: [false, true]) func anAcceptedCertificateOpensAndTheServerRecordsItsSubject(tls12: Bool)
        async throws
    {
        let server = try self.server(tls12: tls12)
        let identity = Self.clientAuthority.issueClient(commonName: "device-42")
        let client = try WebSocketClient(configuration: self.configuration(server, identity: identity))
        let recorder = EventRecorder(client.events)
        await client.start()
        #expect(await recorder.state(.open) != nil)
        try await client.send(text: "mutually authenticated")
        #expect(await recorder.message() == .text("mutually authenticated"))
        await client.stop()
        let record = try await server.waitForEnd(ofConnection: 1)
        #expect(record.clientCertificateSubject == "CN=device-42")
        await server.stop()
    }

    @Test(arguments: [false, true]) func aReconnectResumesTheSessionAndTheServerStillKnowsTheSubject(tls12: Bool)
        async throws
    {
        var options = Self.serverCertificate
            .serverTLS(requiringClientCertificatesFrom: Self.clientAuthority.certificate).options
        options.tls12OnlyForTesting = tls12
        // The first connection is reset, as when the network drops it: the client reconnects at once.
        let server = try TestServer(configuration: .init(tls: TestServerTLS(options))) { context in
            context.index == 1 ? .reset(afterMilliseconds: 100) : .echo
        }
        let identity = Self.clientAuthority.issueClient(commonName: "device-resumed")
        let client = try WebSocketClient(configuration: self.configuration(server, identity: identity))
        let recorder = EventRecorder(client.events)
        await client.start()
        #expect(await recorder.record(.opened) != nil)
        #expect(await recorder.record(.opened) != nil)
        await client.stop()
        let first = try await server.waitForEnd(ofConnection: 1)
        let second = try await server.waitForEnd(ofConnection: 2)
        #expect(first.tlsResumed == false && second.tlsResumed == true)
        // A resumed session carries the certificate verified on the full handshake.
        #expect(first.clientCertificateSubject == "CN=device-resumed")
        #expect(second.clientCertificateSubject == "CN=device-resumed")
        await server.stop()
    }

    /// Runs a client that the server refuses; returns the close reason, the state's failure and the server's record.
    private func refused(_ identity: TestCertificate?, tls12: Bool) async throws
        -> (closed: CloseReason?, failure: CloseReason?, server: ConnectionRecord, retried: Bool)
    {
        let server = try self.server(tls12: tls12)
        let client = try WebSocketClient(configuration: self.configuration(server, identity: identity))
        let recorder = EventRecorder(client.events)
        await client.start()
        let closed = await recorder.record(.closed)
        let failed = await recorder.state(.failed)
        await client.stop()
        let record = try await server.waitForEnd(ofConnection: 1)
        let retried = recorder.records.contains { $0.kind == .retryScheduled } || server.connections.count > 1
        #expect(!recorder.records.contains { $0.kind == .opened })
        await server.stop()
        return (closed?.reason, failed?.failure, record, retried)
    }

    @Test(arguments: [false, true]) func withoutACertificateTheAttemptFailsAsRequiredAndIsNotRetried(tls12: Bool)
        async throws
    {
        let outcome = try await self.refused(nil, tls12: tls12)
        #expect(outcome.closed == .tlsFailed(detail: "client certificate required"))
        #expect(outcome.failure == .tlsFailed(detail: "client certificate required"))
        #expect(!outcome.retried)
        #expect(outcome.server.end?.reason == .tlsFailed("client certificate required"))
        #expect(outcome.server.request == nil)
    }

    @Test(arguments: [false, true]) func aCertificateFromAnotherCAIsRejectedAndNotRetried(tls12: Bool) async throws {
        let stranger = TestCertificateAuthority(commonName: "Stranger CA").issueClient(commonName: "stranger")
        let outcome = try await self.refused(stranger, tls12: tls12)
        #expect(outcome.closed == .tlsFailed(detail: "client certificate rejected: unknown ca"))
        #expect(outcome.failure == outcome.closed)
        #expect(!outcome.retried)
        #expect(outcome.server.end?.reason == .tlsFailed("untrusted issuer"))
        #expect(outcome.server.clientCertificateSubject == nil)
    }

    @Test(arguments: [false, true]) func anExpiredCertificateIsRejectedAndNotRetried(tls12: Bool) async throws {
        let expired = Self.clientAuthority.issueClient(commonName: "lapsed", notBefore: -7200, notAfter: -3600)
        let outcome = try await self.refused(expired, tls12: tls12)
        #expect(outcome.closed == .tlsFailed(detail: "client certificate rejected: certificate expired"))
        #expect(!outcome.retried)
        #expect(outcome.server.end?.reason == .tlsFailed("certificate expired"))
    }

    @Test func anEncryptedKeyOpensWithItsPassphrase() async throws {
        let server = try self.server(tls12: false)
        let identity = Self.clientAuthority.issueClient(commonName: "sealed")
        var configuration = self.configuration(server, identity: nil)
        configuration.tls.clientIdentity = .pem(
            certificateChain: .pem(Data(identity.certificatePEM)),
            privateKey: .pem(Data(identity.encryptedPrivateKeyPEM(passphrase: "correct horse"))),
            passphrase: "correct horse")
        let client = try WebSocketClient(configuration: configuration)
        let recorder = EventRecorder(client.events)
        await client.start()
        #expect(await recorder.record(.opened) != nil)
        await client.stop()
        #expect(try await server.waitForEnd(ofConnection: 1).clientCertificateSubject == "CN=sealed")
        await server.stop()
    }

    @Test(arguments: [false, true]) func aPKCS12IdentityOpensAsThePEMOneDoes(tls12: Bool) async throws {
        let server = try self.server(tls12: tls12)
        let identity = Self.clientAuthority.issueClient(commonName: "archived")
        var configuration = self.configuration(server, identity: nil)
        configuration.tls.clientIdentity = .pkcs12(
            Data(identity.pkcs12(passphrase: "p12 pass")), passphrase: "p12 pass")
        let client = try WebSocketClient(configuration: configuration)
        let recorder = EventRecorder(client.events)
        await client.start()
        #expect(await recorder.record(.opened) != nil)
        await client.stop()
        #expect(try await server.waitForEnd(ofConnection: 1).clientCertificateSubject == "CN=archived")
        await server.stop()
    }

    @Test func aWrongKeyAPassphraseOrAnUnreadableFileIsAConfigurationErrorBeforeAnyConnection() throws {
        let identity = Self.clientAuthority.issueClient(commonName: "device")
        let encrypted = Data(identity.encryptedPrivateKeyPEM(passphrase: "right"))
        let chain = TLSOptions.Certificates.pem(Data(identity.certificatePEM))
        let cases: [(TLSOptions.ClientIdentity, String)] = [
            (.pem(certificateChain: chain,
                  privateKey: .pem(Data(Self.clientAuthority.issueClient(commonName: "other").privateKeyPEM))),
             "the client private key does not match the client certificate"),
            (.pem(certificateChain: chain, privateKey: .pem(encrypted), passphrase: "wrong"),
             "the client private key is encrypted and the passphrase is missing or does not decrypt it"),
            (.pem(certificateChain: chain, privateKey: .pem(encrypted)),
             "the client private key is encrypted and the passphrase is missing or does not decrypt it"),
            (.pem(certificateChain: .pemFile("/nonexistent/client.pem"), privateKey: .pemFile("/nonexistent/k.pem")),
             "the client certificate chain could not be read as PEM certificates"),
            (.pkcs12(Data([1, 2, 3]), passphrase: "p"),
             "the client PKCS#12 archive could not be read or holds no certificate and key"),
            (.pkcs12(Data(identity.pkcs12(passphrase: "right")), passphrase: "wrong"),
             "the client private key is encrypted and the passphrase is missing or does not decrypt it"),
        ]
        for (identity, problem) in cases {
            // No server: the error comes when the client is created.
            var configuration = WebSocketConfiguration(url: URL(string: "wss://127.0.0.1:9/")!, pathMonitoring: .none)
            configuration.tls.clientIdentity = identity
            #expect(throws: WebSocketConfigurationError.self) { try WebSocketClient(configuration: configuration) }
            do {
                try configuration.validate()
                Issue.record("\(identity) passed validation")
            } catch {
                #expect(error.property == "tls.clientIdentity")
                #expect(error.value == problem)
                #expect(!error.description.contains("right") && !error.description.contains("wrong"))
            }
        }
    }

    @Test func theIdentityRedactsItsKeyAndPassphraseHoweverItIsPrinted() {
        let identity = Self.clientAuthority.issueClient(commonName: "printed")
        let secretKey = identity.encryptedPrivateKeyPEM(passphrase: "s3cret-passphrase")
        let pem = TLSOptions.ClientIdentity.pem(
            certificateChain: .pem(Data(identity.certificatePEM)), privateKey: .pem(Data(secretKey)),
            passphrase: "s3cret-passphrase")
        let archive = TLSOptions.ClientIdentity.pkcs12(Data("p12-archive-bytes".utf8), passphrase: "s3cret-passphrase")
        var configuration = WebSocketConfiguration(url: URL(string: "wss://example.com/")!, pathMonitoring: .none)
        configuration.tls.clientIdentity = pem
        let values: [Any] = [
            pem, archive, Optional(pem) as Any, [pem, archive], TLSOptions(clientIdentity: pem), configuration,
        ]
        for value in values {
            var dumped = ""
            dump(value, to: &dumped)
            let texts = [
                "\(value)", String(reflecting: value), dumped,
                "\(Mirror(reflecting: value).children.map { "\($0.label ?? ""): \($0.value)" })",
            ]
            for text in texts {
                #expect(!text.contains("s3cret"), "\(text)")
                #expect(!text.contains("ENCRYPTED PRIVATE KEY"), "\(text)")
                #expect(!text.contains("p12-archive"), "\(text)")
                #expect(!text.contains(Data("p12-archive-bytes".utf8).base64EncodedString()), "\(text)")
            }
        }
        #expect("\(pem)" == "ClientIdentity(PEM, key redacted, passphrase redacted)")
        #expect(String(reflecting: archive) == "ClientIdentity(PKCS#12, key redacted, passphrase redacted)")
        // The public part stays visible in the mirror: where the certificate comes from.
        #expect(Mirror(reflecting: pem).children.map(\.label) == ["certificateChain", "privateKey", "passphrase"])
    }
}
#endif
