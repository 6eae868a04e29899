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
