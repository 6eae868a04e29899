/// One `permessage-deflate` offer a client sends (RFC 7692 §7.1). A client may send several, in order of
/// preference (§5): servers that reject window parameters can then accept a bare offer that follows.
public struct PerMessageDeflateOffer: Equatable, Hashable, Sendable {
    /// Whether the client's offer names `client_max_window_bits`, and with what value.
    public enum ClientWindow: Equatable, Hashable, Sendable {
        /// Not named: the server may not limit the client's window.
        case notOffered
        /// Named without a value: the server may limit the client's window (to 9...15).
        case supported
        /// Named with a value (9...15): the client compresses with at most this window; the server may lower it.
        case limit(Int)
    }

    /// Ask the server to reset its compression context after each message.
    public var serverNoContextTakeover: Bool
    /// Tell the server this client resets its compression context after each message.
    public var clientNoContextTakeover: Bool
    /// Ask the server to compress with a window of at most 2^bits bytes (9...15; nil: no limit asked).
    public var serverMaxWindowBits: Int?
    /// What the offer says of the client's window.
    public var clientMaxWindowBits: ClientWindow

    /// - Parameters are the offer's RFC 7692 parameters. Window bits outside 9...15 are refused by `validate()`
    ///   (zlib cannot compress with a window of 8, so Tether never offers or accepts it).
    public init(
        serverNoContextTakeover: Bool = false,
        clientNoContextTakeover: Bool = false,
        serverMaxWindowBits: Int? = nil,
        clientMaxWindowBits: ClientWindow = .supported
    ) {
        self.serverNoContextTakeover = serverNoContextTakeover
        self.clientNoContextTakeover = clientNoContextTakeover
        self.serverMaxWindowBits = serverMaxWindowBits
        self.clientMaxWindowBits = clientMaxWindowBits
    }

    /// `permessage-deflate; client_max_window_bits`: what most clients offer (the server may limit our window).
    public static let standard = PerMessageDeflateOffer()
    /// `permessage-deflate` with no parameter, for servers that decline any offer with one.
    public static let bare = PerMessageDeflateOffer(clientMaxWindowBits: .notOffered)

    /// The window sizes an endpoint can use (RFC 7692 allows 8, which zlib cannot compress with).
    public static let windowBitsRange = 9...15

    /// Throws a usage error naming the first parameter out of range.
    public func validate() throws(WireUsageError) {
        if let bits = self.serverMaxWindowBits, !Self.windowBitsRange.contains(bits) {
            throw WireUsageError.invalidHandshakeField("server_max_window_bits")
        }
        if case .limit(let bits) = self.clientMaxWindowBits, !Self.windowBitsRange.contains(bits) {
            throw WireUsageError.invalidHandshakeField("client_max_window_bits")
        }
    }

    /// The offer as an extension element.
    package var element: ExtensionElement {
        var parameters: [(name: String, value: String?)] = []
        if self.serverNoContextTakeover { parameters.append((PerMessageDeflate.serverNoContextTakeover, nil)) }
        if self.clientNoContextTakeover { parameters.append((PerMessageDeflate.clientNoContextTakeover, nil)) }
        if let bits = self.serverMaxWindowBits { parameters.append((PerMessageDeflate.serverMaxWindowBits, "\(bits)")) }
        switch self.clientMaxWindowBits {
        case .notOffered: break
        case .supported: parameters.append((PerMessageDeflate.clientMaxWindowBits, nil))
        case .limit(let bits): parameters.append((PerMessageDeflate.clientMaxWindowBits, "\(bits)"))
        }
        return ExtensionElement(name: PerMessageDeflate.name, parameters: parameters)
    }
}

/// What both ends agreed for `permessage-deflate` on one connection (RFC 7692 §7.1).
public struct PerMessageDeflateParameters: Equatable, Hashable, Sendable {
    /// The server resets its compression context after each message.
    public var serverNoContextTakeover: Bool
    /// The client resets its compression context after each message.
    public var clientNoContextTakeover: Bool
    /// The window the server compresses with (9...15).
    public var serverMaxWindowBits: Int
    /// The window the client compresses with (9...15).
    public var clientMaxWindowBits: Int

    public init(
        serverNoContextTakeover: Bool = false,
        clientNoContextTakeover: Bool = false,
        serverMaxWindowBits: Int = 15,
        clientMaxWindowBits: Int = 15
    ) {
        self.serverNoContextTakeover = serverNoContextTakeover
        self.clientNoContextTakeover = clientNoContextTakeover
        self.serverMaxWindowBits = serverMaxWindowBits
        self.clientMaxWindowBits = clientMaxWindowBits
    }

    /// How an endpoint in `role` compresses what it sends.
    public func sending(as role: Role) -> (noContextTakeover: Bool, windowBits: Int) {
        role == .client
            ? (self.clientNoContextTakeover, self.clientMaxWindowBits)
            : (self.serverNoContextTakeover, self.serverMaxWindowBits)
    }

    /// How an endpoint in `role` inflates what it receives (the peer's settings).
    public func receiving(as role: Role) -> (noContextTakeover: Bool, windowBits: Int) {
        self.sending(as: role == .client ? .server : .client)
    }
}

/// What a server does with the `permessage-deflate` offers it receives.
public struct PerMessageDeflateServerPolicy: Equatable, Hashable, Sendable {
    /// Reset the server's compression context after each message (answered as `server_no_context_takeover` even
    /// when not asked).
    public var serverNoContextTakeover: Bool
    /// Ask the client to reset its context after each message (`client_no_context_takeover`).
    public var clientNoContextTakeover: Bool
    /// The largest window the server compresses with (9...15); below 15 it is answered even when not asked.
    public var serverMaxWindowBits: Int
    /// The largest window the server accepts from the client (9...15), answered when the offer allows it.
    public var clientMaxWindowBits: Int

    public init(
        serverNoContextTakeover: Bool = false,
        clientNoContextTakeover: Bool = false,
        serverMaxWindowBits: Int = 15,
        clientMaxWindowBits: Int = 15
    ) {
        self.serverNoContextTakeover = serverNoContextTakeover
        self.clientNoContextTakeover = clientNoContextTakeover
        self.serverMaxWindowBits = serverMaxWindowBits
        self.clientMaxWindowBits = clientMaxWindowBits
    }
}

/// Negotiation of `permessage-deflate` (RFC 7692 §5 and §7.1), for both roles: the client's offer header and its
/// strict check of the server's answer, and the server's choice among the client's offers.
public enum PerMessageDeflate {
    public static let name = "permessage-deflate"
    static let serverNoContextTakeover = "server_no_context_takeover"
    static let clientNoContextTakeover = "client_no_context_takeover"
    static let serverMaxWindowBits = "server_max_window_bits"
    static let clientMaxWindowBits = "client_max_window_bits"
    private static let parameterNames = [
        serverNoContextTakeover, clientNoContextTakeover, serverMaxWindowBits, clientMaxWindowBits,
    ]

    /// The `Sec-WebSocket-Extensions` value offering `offers` in order, for example
    /// `permessage-deflate; client_max_window_bits, permessage-deflate`.
    public static func offerHeader(_ offers: [PerMessageDeflateOffer]) -> String {
        offers.map(\.element.headerText).joined(separator: ", ")
    }

    // MARK: - Client

    /// Checks the server's `Sec-WebSocket-Extensions` answer (its list elements) against the offers sent, by
    /// RFC 7692's rules, and returns what was agreed (nil: the server declined compression).
    ///
    /// The server may add `server_no_context_takeover`, `client_no_context_takeover` and `server_max_window_bits`
    /// unasked. An unknown parameter, a duplicate, a value that is malformed, out of 9...15 or above what was
    /// offered, `client_max_window_bits` when it was not offered, a parameter the accepted offer requires but the
    /// answer lacks, or `permessage-deflate` accepted twice fails with `invalidUpgrade` naming what failed.
    /// Elements of other extensions are left to the handshake's own check.
    public static func accept(
        response elements: [String], offers: [PerMessageDeflateOffer]
    ) throws(HandshakeError) -> PerMessageDeflateParameters? {
        var answers: [ExtensionElement] = []
        for text in elements {
            let element: ExtensionElement
            do { element = try ExtensionElement(parsing: text) } catch {
                throw HandshakeError.invalidUpgrade("Sec-WebSocket-Extensions malformed")
            }
            if element.name == Self.name { answers.append(element) }
        }
        guard let answer = answers.first else { return nil }
        guard !offers.isEmpty else { throw HandshakeError.invalidUpgrade("extension not offered") }
        guard answers.count == 1 else { throw HandshakeError.invalidUpgrade("permessage-deflate accepted twice") }

        let parsed: Answer
        do { parsed = try Answer(answer) } catch { throw HandshakeError.invalidUpgrade("permessage-deflate: \(error)") }
        var firstMismatch: String?
        for offer in offers {
            switch parsed.agreement(with: offer) {
            case .success(let parameters): return parameters
            case .failure(let mismatch): firstMismatch = firstMismatch ?? mismatch.text
            }
        }
        let reason = firstMismatch ?? "no offer"
        throw HandshakeError.invalidUpgrade(
            offers.count == 1 ? "permessage-deflate: \(reason)" : "permessage-deflate fits no offer (first: \(reason))"
        )
    }

    /// A server's answer, its parameters read and checked on their own.
    private struct Answer {
        var serverNoContextTakeover = false
        var clientNoContextTakeover = false
        var serverMaxWindowBits: Int?
        var clientMaxWindowBits: Int?

        init(_ element: ExtensionElement) throws(ParameterError) {
            var seen: Set<String> = []
            for parameter in element.parameters {
                guard PerMessageDeflate.parameterNames.contains(parameter.name) else { throw .unknown }
                guard seen.insert(parameter.name).inserted else { throw .repeated(parameter.name) }
                switch parameter.name {
                case PerMessageDeflate.serverNoContextTakeover, PerMessageDeflate.clientNoContextTakeover:
                    guard parameter.value == nil else { throw .unexpectedValue(parameter.name) }
                    if parameter.name == PerMessageDeflate.serverNoContextTakeover {
                        self.serverNoContextTakeover = true
                    } else {
                        self.clientNoContextTakeover = true
                    }
                default:
                    // In an answer, both window parameters need a value (RFC 7692 §7.1.2.2).
                    guard let value = parameter.value else { throw .missingValue(parameter.name) }
                    let bits = try PerMessageDeflate.windowBits(value, name: parameter.name)
                    if parameter.name == PerMessageDeflate.serverMaxWindowBits {
                        self.serverMaxWindowBits = bits
                    } else {
                        self.clientMaxWindowBits = bits
                    }
                }
            }
        }

        func agreement(with offer: PerMessageDeflateOffer) -> Result<PerMessageDeflateParameters, Mismatch> {
            if offer.serverNoContextTakeover, !self.serverNoContextTakeover {
                return .failure(Mismatch(text: "server_no_context_takeover offered but not answered"))
            }
            if let offered = offer.serverMaxWindowBits {
                guard let answered = self.serverMaxWindowBits else {
                    return .failure(Mismatch(text: "server_max_window_bits offered but not answered"))
                }
                guard answered <= offered else {
                    return .failure(Mismatch(text: "server_max_window_bits=\(answered) above the offered \(offered)"))
                }
            }
            var clientBits = 15
            switch (offer.clientMaxWindowBits, self.clientMaxWindowBits) {
            case (.notOffered, .some):
                return .failure(Mismatch(text: "client_max_window_bits answered but not offered"))
            case (.notOffered, nil), (.supported, nil):
                break
            case (.supported, .some(let answered)):
                clientBits = answered
            case (.limit(let offered), nil):
                clientBits = offered
            case (.limit(let offered), .some(let answered)):
                guard answered <= offered else {
                    return .failure(Mismatch(text: "client_max_window_bits=\(answered) above the offered \(offered)"))
                }
                clientBits = answered
            }
            return .success(
                PerMessageDeflateParameters(
                    serverNoContextTakeover: self.serverNoContextTakeover,
                    clientNoContextTakeover: self.clientNoContextTakeover || offer.clientNoContextTakeover,
                    serverMaxWindowBits: self.serverMaxWindowBits ?? 15,
                    clientMaxWindowBits: clientBits
                ))
        }
    }

    private struct Mismatch: Error {
        var text: String
    }

    /// What is wrong with one parameter; the description is the fixed text a handshake failure carries.
    private enum ParameterError: Error, CustomStringConvertible {
        case unknown
        case repeated(String)
        case unexpectedValue(String)
        case missingValue(String)
        case malformedValue(String)
        case outOfRange(String)
        case unsupportedWindow(String)

        var description: String {
            switch self {
            case .unknown: "unknown parameter"
            case .repeated(let name): "\(name) repeated"
            case .unexpectedValue(let name): "\(name) has a value"
            case .missingValue(let name): "\(name) without a value"
            case .malformedValue(let name): "\(name) value malformed"
            case .outOfRange(let name): "\(name) out of range"
            case .unsupportedWindow(let name): "\(name)=8 not supported"
            }
        }
    }

    /// A window-bits value: a decimal integer without leading zeros in 8...15 (RFC 7692 §7.1.2), of which Tether
    /// supports 9...15.
    private static func windowBits(_ value: String, name: String) throws(ParameterError) -> Int {
        let digits = Array(value.utf8)
        guard !digits.isEmpty, digits.count <= 2, digits.allSatisfy({ (0x30...0x39).contains($0) }),
            digits[0] != UInt8(ascii: "0")
        else { throw .malformedValue(name) }
        let bits = digits.reduce(0) { $0 * 10 + Int($1 - 0x30) }
        guard (8...15).contains(bits) else { throw .outOfRange(name) }
        guard bits != 8 else { throw .unsupportedWindow(name) }
        return bits
    }

    // MARK: - Server

    /// Chooses the first of the client's `permessage-deflate` offers (its `Sec-WebSocket-Extensions` list elements,
    /// in order) that `policy` can accept, and returns what was agreed with the answer element to send; nil when
    /// none can be accepted (the handshake then goes on without compression). An offer that is malformed by
    /// RFC 7692's rules, or asks for a window of 8, is declined.
    public static func respond(
        to elements: [String], policy: PerMessageDeflateServerPolicy
    ) -> (parameters: PerMessageDeflateParameters, answer: String)? {
        for text in elements {
            guard let element = try? ExtensionElement(parsing: text), element.name == Self.name,
                let offer = try? Self.offer(element)
            else { continue }
            var parameters = PerMessageDeflateParameters(
                serverNoContextTakeover: policy.serverNoContextTakeover || offer.serverNoContextTakeover,
                clientNoContextTakeover: policy.clientNoContextTakeover || offer.clientNoContextTakeover,
                serverMaxWindowBits: min(policy.serverMaxWindowBits, offer.serverMaxWindowBits ?? 15),
                clientMaxWindowBits: 15
            )
            var answer = ExtensionElement(name: Self.name)
            if parameters.serverNoContextTakeover { answer.parameters.append((Self.serverNoContextTakeover, nil)) }
            if parameters.clientNoContextTakeover { answer.parameters.append((Self.clientNoContextTakeover, nil)) }
            if offer.serverMaxWindowBits != nil || parameters.serverMaxWindowBits < 15 {
                answer.parameters.append((Self.serverMaxWindowBits, "\(parameters.serverMaxWindowBits)"))
            }
            switch offer.clientMaxWindowBits {
            case .notOffered:
                // The client's window cannot be limited; a policy that needs a smaller one declines this offer.
                guard policy.clientMaxWindowBits == 15 else { continue }
            case .supported:
                parameters.clientMaxWindowBits = policy.clientMaxWindowBits
            case .limit(let bits):
                parameters.clientMaxWindowBits = min(policy.clientMaxWindowBits, bits)
            }
            if offer.clientMaxWindowBits != .notOffered, parameters.clientMaxWindowBits < 15 {
                answer.parameters.append((Self.clientMaxWindowBits, "\(parameters.clientMaxWindowBits)"))
            }
            return (parameters, answer.headerText)
        }
        return nil
    }

    /// Reads a client's offer element strictly.
    private static func offer(_ element: ExtensionElement) throws(ParameterError) -> PerMessageDeflateOffer {
        var offer = PerMessageDeflateOffer(clientMaxWindowBits: .notOffered)
        var seen: Set<String> = []
        for parameter in element.parameters {
            guard Self.parameterNames.contains(parameter.name) else { throw .unknown }
            guard seen.insert(parameter.name).inserted else { throw .repeated(parameter.name) }
            switch parameter.name {
            case Self.serverNoContextTakeover:
                guard parameter.value == nil else { throw .unexpectedValue(parameter.name) }
                offer.serverNoContextTakeover = true
            case Self.clientNoContextTakeover:
                guard parameter.value == nil else { throw .unexpectedValue(parameter.name) }
                offer.clientNoContextTakeover = true
            case Self.serverMaxWindowBits:
                guard let value = parameter.value else { throw .missingValue(parameter.name) }
                offer.serverMaxWindowBits = try Self.windowBits(value, name: parameter.name)
            default:
                if let value = parameter.value {
                    offer.clientMaxWindowBits = .limit(try Self.windowBits(value, name: parameter.name))
                } else {
                    offer.clientMaxWindowBits = .supported
                }
            }
        }
        return offer
    }
}
