#if os(Linux)
import Foundation
import Testing
import TetherPOSIX
@testable import TetherCLI
import TetherTestServer

/// `tether serve --tls-cert F --tls-key F` and `tether connect wss://… --ca-file F | --pin P | --insecure`, in
/// process, with a throw-away CA written to a temporary directory.
@Suite(.timeLimit(.minutes(1)))
struct ServeTLSTests {
    /// The CA, a server certificate for 127.0.0.1 and its key, as PEM files.
    struct Files {
        let directory: String
        let authority = TestCertificateAuthority()
        let certificate: TestCertificate
        var caFile: String { self.directory + "/ca.pem" }
        var certificateFile: String { self.directory + "/server.pem" }
        var keyFile: String { self.directory + "/server.key" }

        init() throws {
            self.directory = NSTemporaryDirectory() + "tether-serve-tls-\(UInt32.random(in: 0...UInt32.max))"
            try FileManager.default.createDirectory(atPath: self.directory, withIntermediateDirectories: true)
            self.certificate = self.authority.issue()
            try Data(self.authority.certificate.certificatePEM).write(to: URL(fileURLWithPath: self.caFile))
            try Data(self.certificate.certificatePEM).write(to: URL(fileURLWithPath: self.certificateFile))
            try Data(self.certificate.privateKeyPEM).write(to: URL(fileURLWithPath: self.keyFile))
        }
    }

    @Test func serveOverTLSAndConnectTrustingTheCAFileExchangeMessages() async throws {
        let files = try Files()
        let flags = ["--tls-cert", files.certificateFile, "--tls-key", files.keyFile, "--send", "3", "--size", "4"]
        try await serving(serveOptions(flags)) { url in
            #expect(url.hasPrefix("wss://127.0.0.1:"))
            let client = CapturedIO()
            let status = await TetherCommand.run(
                ["connect", url, "--ca-file", files.caFile, "--count", "3", "--no-path-monitor"], io: client.io)
            #expect(status == 0, "\(client.error)")
            #expect(client.outputLines == ["0...", "1...", "2..."])
        }
    }

    @Test func aCertificateThatDoesNotVerifyExitsThreeWithTheReasonAndInsecureOrAPinOverride() async throws {
        let files = try Files()
        try await serving(serveOptions(["--tls-cert", files.certificateFile, "--tls-key", files.keyFile])) { url in
            let untrusted = CapturedIO()
            #expect(await TetherCommand.run(["connect", url, "--no-path-monitor"], io: untrusted.io) == 3)
            #expect(untrusted.error.contains("stopped: tls_failed (untrusted issuer)"), "\(untrusted.error)")

            let wrongPin = CapturedIO()
            let otherPin = TestCertificateAuthority().certificate.pin
            let pinned = ["connect", url, "--ca-file", files.caFile, "--pin", otherPin, "--no-path-monitor"]
            #expect(await TetherCommand.run(pinned, io: wrongPin.io) == 3)
            #expect(wrongPin.error.contains("stopped: tls_failed (pin mismatch)"), "\(wrongPin.error)")

            for flags in [["--insecure"], ["--insecure", "--pin", files.certificate.pin]] {
                let accepted = CapturedIO()
                accepted.endInput()
                let status = await TetherCommand.run(["connect", url, "--no-path-monitor"] + flags, io: accepted.io)
                #expect(status == 0, "\(flags): \(accepted.error)")
                #expect(accepted.error.contains(" open gen=1 "), "\(flags): \(accepted.error)")
            }
        }
    }

    @Test func malformedTLSFlagsAreBadArguments() {
        #expect(throws: ArgumentError.self) {
            try CommandLineParser.parse(["connect", "wss://example.com/", "--pin", "sha256/short"])
        }
        #expect(throws: ArgumentError.requires(flag: "--tls-cert", other: "--tls-key")) {
            try CommandLineParser.parse(["serve", "--tls-cert", "server.pem"])
        }
        #expect(throws: ArgumentError.requires(flag: "--tls-key", other: "--tls-cert")) {
            try CommandLineParser.parse(["serve", "--tls-key", "server.key"])
        }
    }

    @Test func anUnusableCertificateFileFailsServe() async throws {
        guard case .serve(let options) = try CommandLineParser.parse([
            "serve", "--tls-cert", "/nonexistent/server.pem", "--tls-key", "/nonexistent/server.key",
        ]) else {
            Issue.record("expected serve")
            return
        }
        let served = CapturedIO()
        #expect(await ServeCommand.run(options, io: served.io, until: {}) == 1)
        #expect(served.error.contains("tls"))
    }
}
#endif
