import Foundation
import TetherCore
import TetherWire

/// Why a server's certificate was refused by a transport that evaluates it itself (`URLSessionTransport` on Apple
/// platforms). `detail` is the same text `SocketTransport` reports for the same failure, so that a
/// `tls_failed` record reads alike on every platform.
enum ServerTrustFailure: Error, Equatable, Sendable {
    case hostnameMismatch
    case certificateExpired
    case certificateNotYetValid
    case untrustedIssuer
    /// Another verification failure, with the platform's status code.
    case certificateInvalid(status: Int32)
    case pinMismatch
    /// `additionalTrustRoots` could not be read as PEM certificates.
    case unreadableTrustRoots

    var detail: String {
        switch self {
        case .hostnameMismatch: "hostname mismatch"
        case .certificateExpired: "certificate expired"
        case .certificateNotYetValid: "certificate not yet valid"
        case .untrustedIssuer: "untrusted issuer"
        case .certificateInvalid(let status): "certificate invalid (OSStatus \(status))"
        case .pinMismatch: "pin mismatch"
        case .unreadableTrustRoots: "the additional trust roots could not be read as PEM certificates"
        }
    }

    /// How the connection ends: a certificate that does not verify will not verify on a retry either.
    var end: TransportEnd {
        .tlsFailed(detail: self.detail, permanent: true)
    }
}

/// What `TLSOptions` ask of a server-trust challenge, and the decision once the platform evaluated the chain:
/// the generic part of `URLSessionTransport`'s trust evaluation, tested on Linux; the Security calls around it are
/// a thin shell (`ServerTrustEvaluator`).
struct ServerTrustPolicy: Sendable {
    /// The SHA-256 digests the pins name.
    let pinnedDigests: Set<[UInt8]>
    let additionalTrustRoots: [TLSOptions.Certificates]
    let insecureSkipVerification: Bool

    /// - Parameter options: pins must be well formed (`WebSocketConfiguration.validate()` checked them); one that
    ///   is not matches nothing.
    init(_ options: TLSOptions) {
        self.pinnedDigests = Set(options.pins.compactMap { SPKIPin.digest(of: $0)?.bytes })
        self.additionalTrustRoots = options.additionalTrustRoots
        self.insecureSkipVerification = options.insecureSkipVerification
    }

    /// Whether the platform's own evaluation is all that is asked (no roots, pins nor skipping): the challenge is
    /// then left to the platform's default handling, unchanged.
    var isPlatformDefault: Bool {
        self.pinnedDigests.isEmpty && self.additionalTrustRoots.isEmpty && !self.insecureSkipVerification
    }

    /// The outcome of the platform's evaluation of the chain (with the extra roots as anchors besides the system's,
    /// and the URL's host name required).
    enum ChainEvaluation: Equatable, Sendable {
        case trusted
        case rejected(ServerTrustFailure)
    }

    /// Accepts the server (nil) or names why not: the chain must have verified unless verification is skipped,
    /// and then, when there are pins, the SubjectPublicKeyInfo of some certificate of the chain must hash to one of
    /// them. `chain` holds each certificate's DER SPKI, nil for a key it could not be rebuilt for (which matches no
    /// pin).
    func decide(evaluation: ChainEvaluation, chain: [[UInt8]?]) -> ServerTrustFailure? {
        if !self.insecureSkipVerification, case .rejected(let failure) = evaluation { return failure }
        guard !self.pinnedDigests.isEmpty else { return nil }
        let matches = chain.contains { spki in spki.map { self.pinnedDigests.contains(SHA256.hash($0)) } ?? false }
        return matches ? nil : .pinMismatch
    }

    /// The DER certificates of each PEM source, in order, read now (a file when connecting); nil when one cannot
    /// be read or holds no certificate.
    func trustRootCertificates() -> [[UInt8]]? {
        var certificates: [[UInt8]] = []
        for source in self.additionalTrustRoots {
            let text: Data
            switch source {
            case .pem(let data): text = data
            case .pemFile(let path):
                guard let data = FileManager.default.contents(atPath: path) else { return nil }
                text = data
            }
            guard let found = Self.derCertificates(inPEM: text), !found.isEmpty else { return nil }
            certificates += found
        }
        return certificates
    }

    /// The DER of each `CERTIFICATE` block of PEM text; nil when a block's base64 does not decode or a block is not
    /// closed.
    static func derCertificates(inPEM pem: Data) -> [[UInt8]]? {
        let begin = "-----BEGIN CERTIFICATE-----"
        let end = "-----END CERTIFICATE-----"
        var certificates: [[UInt8]] = []
        var rest = Substring(String(decoding: pem, as: UTF8.self))
        while let start = rest.range(of: begin) {
            guard let stop = rest.range(of: end, range: start.upperBound..<rest.endIndex) else { return nil }
            let body = rest[start.upperBound..<stop.lowerBound].filter { !$0.isWhitespace }
            guard let der = Data(base64Encoded: String(body)), !der.isEmpty else { return nil }
            certificates.append([UInt8](der))
            rest = rest[stop.upperBound...]
        }
        return certificates
    }
}
