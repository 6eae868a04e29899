#if os(Linux)
/// Why a TLS connection failed. Every case is a fixed text from Tether or OpenSSL, never data from the peer.
package enum TLSFailure: Error, Equatable, Sendable, CustomStringConvertible {
    /// The certificate does not name the host (or IP address) connected to.
    case hostnameMismatch
    /// The certificate (or one in its chain) has expired.
    case certificateExpired
    /// The certificate (or one in its chain) is not valid yet.
    case certificateNotYetValid
    /// The chain does not lead to a trusted root (an unknown issuer or a self-signed certificate).
    case untrustedIssuer
    /// Another certificate verification failure, with OpenSSL's `X509_V_ERR_*` code.
    case certificateInvalid(code: Int32)
    /// No certificate of the chain matches a configured pin.
    case pinMismatch
    /// OpenSSL refused the host name or address to verify (for example a name with an embedded NUL): the
    /// connection fails closed, before the handshake, instead of going on without the check.
    case hostCheckUnavailable
    /// The peers share no acceptable protocol version (Tether requires TLS 1.2 or later).
    case protocolVersion
    /// Any other handshake failure, with OpenSSL's reason text.
    case handshakeFailed(String)
    /// The peer ended the stream without a `close_notify` alert: what was received may be cut short.
    case truncated
    /// A failure after the handshake (a bad record, an alert), with OpenSSL's reason text.
    case protocolError(String)
    /// The server requires a client certificate (mutual TLS) and the client had none to present. On a server:
    /// the client presented none.
    case clientCertificateRequired
    /// The server refused the client's certificate, with the alert it sent (for example "unknown ca",
    /// "certificate expired"): a fixed text from Tether's table, never peer data. With TLS 1.3 it arrives after
    /// the client's side of the handshake completed, on the first read, and is still this failure.
    case clientCertificateRejected(alert: String)

    /// Whether the failure is about the peer's certificate: retrying will not help.
    package var isCertificateFailure: Bool {
        switch self {
        case .hostnameMismatch, .certificateExpired, .certificateNotYetValid, .untrustedIssuer, .certificateInvalid,
            .pinMismatch, .clientCertificateRequired, .clientCertificateRejected, .hostCheckUnavailable:
            true
        case .protocolVersion, .handshakeFailed, .truncated, .protocolError:
            false
        }
    }

    /// A short, stable text for records and logs (for example "hostname mismatch").
    package var description: String {
        switch self {
        case .hostnameMismatch: "hostname mismatch"
        case .certificateExpired: "certificate expired"
        case .certificateNotYetValid: "certificate not yet valid"
        case .untrustedIssuer: "untrusted issuer"
        case .certificateInvalid(let code): "certificate invalid (X509_V_ERR \(code))"
        case .pinMismatch: "pin mismatch"
        case .hostCheckUnavailable: "host check unavailable"
        case .protocolVersion: "protocol version"
        case .handshakeFailed(let reason): "handshake failed: \(reason)"
        case .truncated: "truncated (no close_notify)"
        case .protocolError(let reason): "protocol error: \(reason)"
        case .clientCertificateRequired: "client certificate required"
        case .clientCertificateRejected(let alert): "client certificate rejected: \(alert)"
        }
    }
}
#endif
