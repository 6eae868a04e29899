import Foundation

/// Keys made by the `openssl` command in a temporary directory, with what OpenSSL says about them: the reference the
/// SubjectPublicKeyInfo rebuilt in Swift is compared with, byte for byte.
struct OpenSSLKey {
    /// OpenSSL's DER SubjectPublicKeyInfo of the key (`pkey -pubout -outform DER`).
    let subjectPublicKeyInfo: [UInt8]
    /// The raw public key as Apple's `SecKeyCopyExternalRepresentation` gives it, obtained from OpenSSL without
    /// going through the SPKI: PKCS#1 `RSAPublicKey` for RSA (`rsa -RSAPublicKey_out`), the uncompressed point printed
    /// by `pkey -text_pub` for EC.
    let rawKey: [UInt8]

    /// `genpkey` arguments for each kind of key a server certificate carries.
    static func rsa(bits: Int) -> [String] { ["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:\(bits)"] }
    static func ellipticCurve(_ curve: String) -> [String] {
        ["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:\(curve)", "-pkeyopt", "ec_param_enc:named_curve"]
    }

    /// `generate` on a thread of its own: an RSA 4096 key takes the `openssl` command seconds, and waiting for it on
    /// the concurrency pool (two threads here) stalled every other test of the parallel suite into timeouts.
    static func generated(_ algorithm: [String]) async throws -> OpenSSLKey {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try Self.generate(algorithm) }) }.start()
        }
    }

    static func generate(_ algorithm: [String]) throws -> OpenSSLKey {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tether-spki-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let key = directory + "/key.pem"
        let spki = directory + "/spki.der"
        try Self.openssl(["genpkey"] + algorithm + ["-out", key])
        try Self.openssl(["pkey", "-in", key, "-pubout", "-outform", "DER", "-out", spki])
        let raw: [UInt8]
        if algorithm.contains("RSA") {
            let pkcs1 = directory + "/pkcs1.der"
            try Self.openssl(["rsa", "-in", key, "-RSAPublicKey_out", "-outform", "DER", "-out", pkcs1])
            raw = Self.bytes(pkcs1)
        } else {
            let text = directory + "/text.txt"
            try Self.openssl(["pkey", "-in", key, "-text_pub", "-noout", "-out", text])
            raw = try Self.publicPoint(inText: String(decoding: Self.bytes(text), as: UTF8.self))
        }
        return OpenSSLKey(subjectPublicKeyInfo: Self.bytes(spki), rawKey: raw)
    }

    /// The SHA-256 of `bytes` as the `openssl dgst` command computes it.
    static func sha256(_ bytes: [UInt8]) throws -> [UInt8] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tether-sha-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Data(bytes).write(to: URL(fileURLWithPath: directory + "/in"))
        try Self.openssl(["dgst", "-sha256", "-binary", "-out", directory + "/out", directory + "/in"])
        return Self.bytes(directory + "/out")
    }

    /// The hex bytes after `pub:` in `openssl pkey -text_pub` output, up to the next field.
    private static func publicPoint(inText text: String) throws -> [UInt8] {
        var hex = ""
        var inside = false
        for line in text.split(separator: "\n") {
            if line.hasPrefix("pub:") {
                inside = true
                continue
            }
            guard inside else { continue }
            guard line.first == " " else { break }
            hex += line.filter { $0.isHexDigit }
        }
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex, let next = hex.index(index, offsetBy: 2, limitedBy: hex.endIndex) {
            guard let byte = UInt8(hex[index..<next], radix: 16) else { throw OpenSSLCommandError.unreadableOutput }
            bytes.append(byte)
            index = next
        }
        guard !bytes.isEmpty else { throw OpenSSLCommandError.unreadableOutput }
        return bytes
    }

    private static func bytes(_ path: String) -> [UInt8] {
        [UInt8](FileManager.default.contents(atPath: path) ?? Data())
    }

    /// Runs `openssl` with `arguments` (every input and output a file); throws unless it exits 0.
    private static func openssl(_ arguments: [String]) throws {
        guard let executable = ["/usr/bin/openssl", "/usr/local/bin/openssl"].first(where: {
            FileManager.default.isExecutableFile(atPath: $0)
        }) else { throw OpenSSLCommandError.missing }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw OpenSSLCommandError.failed(arguments.first ?? "", process.terminationStatus)
        }
    }
}

enum OpenSSLCommandError: Error, CustomStringConvertible {
    case missing
    case failed(String, Int32)
    case unreadableOutput

    var description: String {
        switch self {
        case .missing: "the openssl command is missing (apt-get install openssl)"
        case .failed(let command, let status): "openssl \(command) exited \(status)"
        case .unreadableOutput: "openssl printed no public point"
        }
    }
}
