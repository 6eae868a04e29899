#if os(Linux)
import Foundation
import TetherTestServer

/// A throw-away CA and server certificates made with the `openssl` command in a temporary directory, once per test
/// process: `valid` (localhost, 127.0.0.1, ::1), `expired`, `wrongHost` (wrong.example), all issued by `ca`, and
/// `selfSigned` (localhost). Every certificate uses the one server key.
struct TestCertificates: Sendable {
    let directory: String
    var caFile: String { self.path("ca.pem") }
    var keyFile: String { self.path("server.key") }
    var validFile: String { self.path("valid.pem") }
    var expiredFile: String { self.path("expired.pem") }
    var wrongHostFile: String { self.path("wronghost.pem") }
    var selfSignedFile: String { self.path("selfsigned.pem") }
    /// `sha256/` and the base64 SPKI digest of the server key, as computed by the `openssl` command.
    let serverPin: String
    /// The pin of the CA's key.
    let caPin: String

    func path(_ name: String) -> String { self.directory + "/" + name }

    func bytes(_ file: String) -> [UInt8] { Array(FileManager.default.contents(atPath: file) ?? Data()) }

    static let shared: Result<TestCertificates, CertificateGenerationError> = Result { try Self.generate() }
        .mapError { $0 as? CertificateGenerationError ?? .failed("\($0)") }

    /// The shared certificates; a missing `openssl` command fails the test with a clear message.
    static func make() throws -> TestCertificates { try self.shared.get() }

    private static func generate() throws -> TestCertificates {
        let directory = NSTemporaryDirectory() + "tether-certs-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        func file(_ name: String) -> String { directory + "/" + name }
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
        try run(["req", "-x509"] + ec + [
            "-keyout", file("ca.key"), "-out", file("ca.pem"), "-subj", "/CN=Tether Test CA", "-days", "2",
            "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign",
        ])
        try run(["req", "-new"] + ec + [
            "-keyout", file("server.key"), "-out", file("server.csr"), "-subj", "/CN=localhost",
        ])
        try "subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1\n".write(
            toFile: file("localhost.ext"), atomically: true, encoding: .utf8)
        try "subjectAltName=DNS:wrong.example\n".write(toFile: file("wrong.ext"), atomically: true, encoding: .utf8)
        let sign = ["x509", "-req", "-in", file("server.csr"), "-CA", file("ca.pem"), "-CAkey", file("ca.key")]
        try run(sign + ["-set_serial", "2", "-days", "2", "-extfile", file("localhost.ext"),
                        "-out", file("valid.pem")])
        // A negative validity puts notAfter before now: the certificate has expired.
        try run(sign + ["-set_serial", "3", "-days", "-1", "-extfile", file("localhost.ext"),
                        "-out", file("expired.pem")])
        try run(sign + ["-set_serial", "4", "-days", "2", "-extfile", file("wrong.ext"),
                        "-out", file("wronghost.pem")])
        try run(["x509", "-req", "-in", file("server.csr"), "-key", file("server.key"), "-days", "2",
                 "-extfile", file("localhost.ext"), "-out", file("selfsigned.pem")])
        return TestCertificates(
            directory: directory, serverPin: try pin(ofKey: file("server.key")), caPin: try pin(ofKey: file("ca.key"))
        )
    }

    /// `sha256/` + base64(SHA-256(DER SubjectPublicKeyInfo)), the way HPKP and curl compute it.
    private static func pin(ofKey keyFile: String) throws -> String {
        let der = try run(["pkey", "-in", keyFile, "-pubout", "-outform", "DER"])
        let digest = try run(["dgst", "-sha256", "-binary"], input: der)
        return "sha256/" + digest.base64EncodedString()
    }

    /// The pin of a certificate file's public key, computed by the `openssl` command.
    static func pin(ofCertificate file: String) throws -> String {
        let key = try run(["x509", "-in", file, "-noout", "-pubkey"])
        let der = try run(["pkey", "-pubin", "-outform", "DER"], input: key)
        let digest = try run(["dgst", "-sha256", "-binary"], input: der)
        return "sha256/" + digest.base64EncodedString()
    }

    @discardableResult
    private static func run(_ arguments: [String], input: Data? = nil) throws -> Data {
        guard let executable = ["/usr/bin/openssl", "/usr/local/bin/openssl"].first(where: {
            FileManager.default.isExecutableFile(atPath: $0)
        }) else {
            throw CertificateGenerationError.failed("the openssl command is missing (apt-get install openssl)")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe()
        let inputPipe = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = inputPipe
        try process.run()
        if let input { inputPipe.fileHandleForWriting.write(input) }
        try inputPipe.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let command = arguments.first ?? ""
            throw CertificateGenerationError.failed("openssl \(command) exited \(process.terminationStatus)")
        }
        return data
    }
}

enum CertificateGenerationError: Error, CustomStringConvertible {
    case failed(String)

    var description: String {
        switch self {
        case .failed(let text): "test certificates: \(text)"
        }
    }
}
#endif
