/// Why a SOCKS5 proxy refused to open the tunnel: its refusal of the authentication (RFC 1929) or its reply to the
/// `CONNECT` (RFC 1928 section 6). A session records it as `proxy_rejected` with a detail naming it (for example
/// `SOCKS host unreachable`), and retries it by the rules of the HTTP proxy refusal of the same meaning: what the
/// proxy will refuse again (credentials, its rules, an unsupported request) is not retried, the origin unreachable
/// from the proxy is retried with backoff (`isPermanent`).
public enum SOCKSRefusal: Hashable, Sendable, CustomStringConvertible {
    /// The proxy accepts none of the offered authentication methods (it wants credentials that were not given).
    case noAcceptableMethod
    /// The proxy refused the user name and password.
    case authenticationFailed
    /// Reply 0x01, general SOCKS server failure.
    case generalFailure
    /// Reply 0x02, connection not allowed by ruleset.
    case notAllowedByRuleset
    /// Reply 0x03, network unreachable (from the proxy).
    case networkUnreachable
    /// Reply 0x04, host unreachable (from the proxy).
    case hostUnreachable
    /// Reply 0x05, connection refused (by the origin, as the proxy saw it).
    case connectionRefused
    /// Reply 0x06, TTL expired.
    case ttlExpired
    /// Reply 0x07, command not supported.
    case commandNotSupported
    /// Reply 0x08, address type not supported (`socks5://` sends an address, `socks5h://` a name: try the other).
    case addressTypeNotSupported
    /// A reply code RFC 1928 does not assign (0x09 and above).
    case unassigned(UInt8)

    /// The refusal for a `CONNECT` reply code other than success (0x00).
    public init(reply code: UInt8) {
        switch code {
        case 0x01: self = .generalFailure
        case 0x02: self = .notAllowedByRuleset
        case 0x03: self = .networkUnreachable
        case 0x04: self = .hostUnreachable
        case 0x05: self = .connectionRefused
        case 0x06: self = .ttlExpired
        case 0x07: self = .commandNotSupported
        case 0x08: self = .addressTypeNotSupported
        default: self = .unassigned(code)
        }
    }

    /// Whether retrying cannot help: the proxy refuses the credentials, its rules forbid the connection, or it does
    /// not support the request (as an HTTP proxy's 407, 403, 405 and 400 are not retried). The origin unreachable
    /// from the proxy (general failure, network or host unreachable, refused, TTL expired, an unassigned code) is
    /// retried with backoff, as an HTTP proxy's 502 and 504 are.
    public var isPermanent: Bool {
        switch self {
        case .noAcceptableMethod, .authenticationFailed, .notAllowedByRuleset, .commandNotSupported,
            .addressTypeNotSupported:
            true
        case .generalFailure, .networkUnreachable, .hostUnreachable, .connectionRefused, .ttlExpired, .unassigned:
            false
        }
    }

    /// Fixed words for records and logs, naming SOCKS and the refusal (`SOCKS connection not allowed by ruleset`).
    public var description: String {
        switch self {
        case .noAcceptableMethod: "SOCKS no acceptable authentication method"
        case .authenticationFailed: "SOCKS authentication failed"
        case .generalFailure: "SOCKS general failure"
        case .notAllowedByRuleset: "SOCKS connection not allowed by ruleset"
        case .networkUnreachable: "SOCKS network unreachable"
        case .hostUnreachable: "SOCKS host unreachable"
        case .connectionRefused: "SOCKS connection refused"
        case .ttlExpired: "SOCKS TTL expired"
        case .commandNotSupported: "SOCKS command not supported"
        case .addressTypeNotSupported: "SOCKS address type not supported"
        case .unassigned(let code): "SOCKS reply \(code)"
        }
    }
}
