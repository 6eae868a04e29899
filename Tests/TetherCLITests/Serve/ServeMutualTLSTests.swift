#if os(Linux)
import Foundation
import Testing
@testable import TetherCLI
import TetherTestServer

/// `tether serve --require-client-cert CA` and `tether connect --cert F --key F [--key-passphrase-env VAR]`, in
/// process, over loopback.
@Suite(.timeLimit(.minutes(1)))
struct ServeMutualTLSTests {
    /// A server certificate and a client CA with a client certificate, as PEM files.
    struct Files {
        let server: ServeTLSTests.Files
        let clientAuthority = TestCertificateAuthority(commonName: "CLI Client CA")
        var clientCAFile: String { self.server.directory + "/client-ca.pem" }
        var clientCertificateFile: String { self.server.directory + "/client.pem" }
        var clientKeyFile: String { self.server.directory + "/client.key" }
        var encryptedKeyFile: String { self.server.directory + "/client-encrypted.key" }

        init() throws {
            self.server = try ServeTLSTests.Files()
            let client = self.clientAuthority.issueClient(commonName: "cli-device")
            try Data(self.clientAuthority.certificate.certificatePEM).write(to: URL(fileURLWithPath: self.clientCAFile))
            try Data(client.certificatePEM).write(to: URL(fileURLWithPath: self.clientCertificateFile))
            try Data(client.privateKeyPEM).write(to: URL(fileURLWithPath: self.clientKeyFile))
            try Data(client.encryptedPrivateKeyPEM(passphrase: "cli secret"))
                .write(to: URL(fileURLWithPath: self.encryptedKeyFile))
        }
    }

    @Test func parsesTheClientCertificateFlagsAndRefusesOrphans() throws {
        let command = try CommandLineParser.parse([
            "connect", "wss://127.0.0.1:9/", "--cert", "c.pem", "--key", "k.pem", "--key-passphrase-env", "PASS",
        ])
        var expected = ConnectOptions(url: URL(string: "wss://127.0.0.1:9/")!)
        expected.clientCertificate = "c.pem"
        expected.clientKey = "k.pem"
        expected.keyPassphraseVariable = "PASS"
        #expect(command == .connect(expected))
        #expect(throws: ArgumentError.requires(flag: "--cert", other: "--key")) {
            try CommandLineParser.parse(["connect", "wss://h/", "--cert", "c.pem"])
        }
        #expect(throws: ArgumentError.requires(flag: "--key", other: "--cert")) {
            try CommandLineParser.parse(["connect", "wss://h/", "--key", "k.pem"])
        }
        #expect(throws: ArgumentError.requires(flag: "--key-passphrase-env", other: "--key")) {
            try CommandLineParser.parse(["connect", "wss://h/", "--key-passphrase-env", "PASS"])
        }
        #expect(throws: ArgumentError.self) {
            try CommandLineParser.parse(
                ["connect", "wss://h/", "--cert", "c", "--key", "k", "--key-passphrase-env", ""])
        }
        #expect(throws: ArgumentError.unknownFlag("--key-passphrase", command: "connect")) {
            try CommandLineParser.parse(["connect", "wss://h/", "--key-passphrase", "secret"])
        }

        let serve = try CommandLineParser.parse(["serve", "--tls-cert", "s.pem", "--tls-key", "s.key",
                                                 "--require-client-cert", "ca.pem"])
        var served = ServeOptions()
        served.tlsCertificate = "s.pem"
        served.tlsKey = "s.key"
        served.clientCertificateAuthorities = "ca.pem"
        #expect(serve == .serve(served))
        #expect(throws: ArgumentError.requires(flag: "--require-client-cert", other: "--tls-cert")) {
            try CommandLineParser.parse(["serve", "--require-client-cert", "ca.pem"])
        }
    }

    /// Runs `tether serve` requiring client certificates until `body` returns; passes it the URL and the output.
    private func serving(_ files: Files, _ body: (String) async throws -> Void) async throws -> CapturedIO {
        let options = try serveOptions([
            "--tls-cert", files.server.certificateFile, "--tls-key", files.server.keyFile,
            "--require-client-cert", files.clientCAFile, "--echo",
        ])
        return try await TetherCLITests.serving(options, body).served
    }

    @Test func connectPresentsItsCertificateAndServePrintsTheSubject() async throws {
        let files = try Files()
        let served = try await self.serving(files) { url in
            let client = CapturedIO()
            client.type("hello")
            let status = await TetherCommand.run([
                "connect", url, "--ca-file", files.server.caFile, "--cert", files.clientCertificateFile,
                "--key", files.clientKeyFile, "--count", "1", "--no-path-monitor",
            ], io: client.io)
            #expect(status == 0, "\(client.error)")
            #expect(client.outputLines == ["hello"])
        }
        #expect(served.output.contains("client certificate CN=cli-device"), "\(served.output)")
    }

    @Test func withoutACertificateConnectStopsWithTLSFailedAndExitsThree() async throws {
        let files = try Files()
        _ = try await self.serving(files) { url in
            let client = CapturedIO()
            let status = await TetherCommand.run(
                ["connect", url, "--ca-file", files.server.caFile, "--no-path-monitor"], io: client.io)
            #expect(status == 3)
            #expect(client.error.contains("stopped: tls_failed (client certificate required)"), "\(client.error)")
        }
    }

    @Test func anEncryptedKeyTakesItsPassphraseFromTheNamedVariableOnly() async throws {
        let files = try Files()
        let base = ["--ca-file", files.server.caFile, "--cert", files.clientCertificateFile,
                    "--key", files.encryptedKeyFile, "--no-path-monitor"]
        _ = try await self.serving(files) { url in
            var io = CapturedIO()
            var withPassphrase = io.io
            withPassphrase.environment = ["TETHER_TEST_KEY_PASSPHRASE": "cli secret"]
            io.endInput()
            #expect(await TetherCommand.run(
                ["connect", url, "--key-passphrase-env", "TETHER_TEST_KEY_PASSPHRASE"] + base, io: withPassphrase) == 0,
                "\(io.error)")
            #expect(io.error.contains(" open gen=1 "), "\(io.error)")

            for environment in [["TETHER_TEST_KEY_PASSPHRASE": "wrong"], [:]] {
                io = CapturedIO()
                var wrong = io.io
                wrong.environment = environment
                let status = await TetherCommand.run(
                    ["connect", url, "--key-passphrase-env", "TETHER_TEST_KEY_PASSPHRASE"] + base, io: wrong)
                #expect(status == 2)
                #expect(io.error.contains(environment.isEmpty ? "is not set" : "tls.clientIdentity"), "\(io.error)")
                #expect(!io.error.contains("wrong"), "\(io.error)")
            }
            io = CapturedIO()
            #expect(await TetherCommand.run(["connect", url] + base, io: io.io) == 2)
            #expect(io.error.contains("passphrase is missing or does not decrypt it"), "\(io.error)")
        }
    }
}
#endif
