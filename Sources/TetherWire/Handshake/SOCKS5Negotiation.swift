/// The client's side of a SOCKS5 `CONNECT` (RFC 1928) with optional username/password authentication
/// (RFC 1929), sans I/O: bytes in, bytes to send and the outcome out, for any split of the input.
///
/// `start()` gives the greeting; each `receive(_:)` says what to send next, that the tunnel is open, or throws
/// the refusal. Credentials go into the authentication request only; no error or description carries them.
public struct SOCKS5Negotiation: Sendable {
    /// Where the proxy should connect.
    public enum Target: Sendable, Equatable {
        /// A host name the proxy resolves (`socks5h://`), at most 255 bytes of UTF-8.
        case name(String, port: Int)
        /// An IPv4 (4 bytes) or IPv6 (16 bytes) address the client resolved (`socks5://`), network order.
        case address([UInt8], port: Int)
    }

    /// What the caller does after a `receive`.
    public enum Step: Sendable, Equatable {
        /// More bytes from the proxy are needed.
        case needMoreInput
        /// Write these bytes to the proxy, then go on receiving.
        case send([UInt8])
        /// The tunnel is open; `remaining` bytes after the reply are already the origin's.
        case established(remaining: [UInt8])
    }

    private enum State: Sendable {
        case idle
        case awaitingMethod
        case awaitingAuthentication
        case awaitingReply
        case established
    }

    private let target: Target
    private let credentials: (user: [UInt8], password: [UInt8])?
    private var state = State.idle
    private var buffer: [UInt8] = []

    /// - Parameter credentials: offered with method 0x02 beside "no authentication"; each at most 255 bytes.
    /// - Throws: `SOCKS5Error.unusableRequest` for a name or credential longer than 255 bytes, or a bad port.
    public init(target: Target, credentials: (user: String, password: String)?) throws(SOCKS5Error) {
        switch target {
        case .name(let name, let port):
            guard (1...255).contains(name.utf8.count), (0...65535).contains(port) else { throw .unusableRequest }
        case .address(let bytes, let port):
            guard bytes.count == 4 || bytes.count == 16, (0...65535).contains(port) else { throw .unusableRequest }
        }
        if let credentials {
            let user = Array(credentials.user.utf8)
            let password = Array(credentials.password.utf8)
            guard (1...255).contains(user.count), password.count <= 255 else { throw .unusableRequest }
            self.credentials = (user, password)
        } else {
            self.credentials = nil
        }
        self.target = target
    }

    /// The greeting: version 5 and the methods offered (no authentication, and username/password when given).
    public mutating func start() -> [UInt8] {
        precondition(self.isIdle, "a negotiation starts once")
        self.state = .awaitingMethod
        return self.credentials == nil ? [0x05, 0x01, 0x00] : [0x05, 0x02, 0x00, 0x02]
    }

    private var isIdle: Bool {
        if case .idle = self.state { return true }
        return false
    }

    /// Takes bytes from the proxy and says what follows.
    /// - Throws: `SOCKS5Error` when the proxy refuses or answers with something that is not SOCKS5.
    public mutating func receive(_ bytes: some Sequence<UInt8>) throws(SOCKS5Error) -> Step {
        self.buffer.append(contentsOf: bytes)
        switch self.state {
        case .idle, .established:
            preconditionFailure("receive is called between start and the established step")
        case .awaitingMethod:
            guard self.buffer.count >= 2 else { return .needMoreInput }
            guard self.buffer[0] == 0x05 else { throw .malformed }
            let method = self.buffer[1]
            self.buffer.removeFirst(2)
            switch method {
            case 0x00:
                self.state = .awaitingReply
                return .send(self.connectRequest())
            case 0x02 where self.credentials != nil:
                self.state = .awaitingAuthentication
                let (user, password) = self.credentials!
                return .send([0x01, UInt8(user.count)] + user + [UInt8(password.count)] + password)
            case 0xFF:
                throw .noAcceptableMethod
            default:
                throw .malformed  // a method that was not offered
            }
        case .awaitingAuthentication:
            guard self.buffer.count >= 2 else { return .needMoreInput }
            guard self.buffer[0] == 0x01 else { throw .malformed }
            guard self.buffer[1] == 0x00 else { throw .authenticationFailed }
            self.buffer.removeFirst(2)
            self.state = .awaitingReply
            return .send(self.connectRequest())
        case .awaitingReply:
            guard self.buffer.count >= 2 else { return .needMoreInput }
            guard self.buffer[0] == 0x05 else { throw .malformed }
            // A refusal may come without a complete bound address; its code is all that counts.
            guard self.buffer[1] == 0x00 else { throw .rejected(SOCKS5Reply(code: self.buffer[1])) }
            guard self.buffer.count >= 5 else { return .needMoreInput }
            guard self.buffer[2] == 0x00 else { throw .malformed }
            let addressLength: Int
            switch self.buffer[3] {
            case 0x01: addressLength = 4
            case 0x04: addressLength = 16
            case 0x03: addressLength = 1 + Int(self.buffer[4])
            default: throw .malformed
            }
            let total = 4 + addressLength + 2
            guard self.buffer.count >= total else { return .needMoreInput }
            self.state = .established
            let remaining = Array(self.buffer[total...])
            self.buffer = []
            return .established(remaining: remaining)
        }
    }

    /// `CONNECT` to the target.
    private func connectRequest() -> [UInt8] {
        var request: [UInt8] = [0x05, 0x01, 0x00]
        let port: Int
        switch self.target {
        case .name(let name, let given):
            let bytes = Array(name.utf8)
            request += [0x03, UInt8(bytes.count)] + bytes
            port = given
        case .address(let bytes, let given):
            request += [bytes.count == 4 ? 0x01 : 0x04] + bytes
            port = given
        }
        return request + [UInt8(port >> 8), UInt8(port & 0xFF)]
    }
}

/// A SOCKS5 reply code other than success (RFC 1928 section 6).
public struct SOCKS5Reply: Hashable, Sendable, CustomStringConvertible {
    public var code: UInt8

    public init(code: UInt8) { self.code = code }

    public static let generalFailure = SOCKS5Reply(code: 0x01)
    public static let notAllowedByRuleset = SOCKS5Reply(code: 0x02)
    public static let networkUnreachable = SOCKS5Reply(code: 0x03)
    public static let hostUnreachable = SOCKS5Reply(code: 0x04)
    public static let connectionRefused = SOCKS5Reply(code: 0x05)
    public static let ttlExpired = SOCKS5Reply(code: 0x06)
    public static let commandNotSupported = SOCKS5Reply(code: 0x07)
    public static let addressTypeNotSupported = SOCKS5Reply(code: 0x08)

    public var description: String {
        switch self.code {
        case 0x01: "general SOCKS server failure"
        case 0x02: "connection not allowed by ruleset"
        case 0x03: "network unreachable"
        case 0x04: "host unreachable"
        case 0x05: "connection refused"
        case 0x06: "TTL expired"
        case 0x07: "command not supported"
        case 0x08: "address type not supported"
        default: "reply \(self.code)"
        }
    }
}

/// Why a SOCKS5 negotiation failed.
public enum SOCKS5Error: Error, Hashable, Sendable, CustomStringConvertible {
    /// The proxy accepts none of the offered methods (it wants credentials that were not given, or others).
    case noAcceptableMethod
    /// The proxy refused the user name and password.
    case authenticationFailed
    /// The proxy refused the `CONNECT` with this reply.
    case rejected(SOCKS5Reply)
    /// The proxy's answer is not SOCKS5.
    case malformed
    /// The request cannot be encoded (a name or credential longer than 255 bytes, an empty user, a bad port).
    case unusableRequest

    public var description: String {
        switch self {
        case .noAcceptableMethod: "the SOCKS proxy accepts none of the offered authentication methods"
        case .authenticationFailed: "the SOCKS proxy refused the credentials"
        case .rejected(let reply): "the SOCKS proxy refused the connection: \(reply)"
        case .malformed: "the SOCKS proxy's answer is malformed"
        case .unusableRequest: "the SOCKS request cannot be encoded (name or credentials too long)"
        }
    }
}
