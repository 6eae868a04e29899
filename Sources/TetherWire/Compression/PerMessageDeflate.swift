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

    /// What a `permessage-deflate` answer among `elements` (the server's `Sec-WebSocket-Extensions` list elements)
    /// agrees, read on its own, without the offer it answers (a platform's task made the offer): each window the
    /// answer names, 15 for one it does not. Nil when no element is `permessage-deflate`, or the first one is
    /// malformed.
    package static func agreement(in elements: [String]) -> PerMessageDeflateParameters? {
        guard let element = elements.lazy.compactMap({ try? ExtensionElement(parsing: $0) })
            .first(where: { $0.name == Self.name }),
            let answer = try? Answer(element)
        else {
            return nil
        }
        return PerMessageDeflateParameters(
            serverNoContextTakeover: answer.serverNoContextTakeover,
            clientNoContextTakeover: answer.clientNoContextTakeover,
            serverMaxWindowBits: answer.serverMaxWindowBits ?? 15,
            clientMaxWindowBits: answer.clientMaxWindowBits ?? 15)
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
