import TetherWire

/// permessage-deflate (RFC 7692) for a client's connections, off unless set (`WebSocketConfiguration.compression`):
/// compression costs memory per connection (see docs/compression.md), so a deployment opts in knowingly.
///
/// The client offers `offers` in order; a server that accepts none opens without compression. An answer that breaks
/// RFC 7692's rules fails the attempt with `handshake_invalid` naming what failed. A connection allocates zlib's
/// state only when it first compresses (a message of at least `threshold` bytes) or inflates, and frees it when it
/// ends; each reconnect starts with fresh contexts.
public struct CompressionOptions: Equatable, Hashable, Sendable {
    /// One offer (RFC 7692 §7.1): its context-takeover and window parameters. Named here so that `import Tether`
    /// is enough to write one.
    public typealias Offer = PerMessageDeflateOffer

    /// The offers, in order of preference (RFC 7692 §5); at least one. Default `[.standard]`
    /// (`permessage-deflate; client_max_window_bits`). Append `.bare` for servers that refuse window parameters.
    public var offers: [PerMessageDeflateOffer]
    /// Messages of at least this many bytes are compressed; smaller ones are sent as they are (`send` can force or
    /// skip compression per message). Default 128 bytes (`WebSocketCompression.standardThreshold`).
    public var threshold: Int
    /// zlib's memory level for compressing, 1...9. Default 8; each step down halves the compressor's 128 KiB of
    /// hash tables at some cost in ratio.
    public var memoryLevel: Int

    public init(
        offers: [PerMessageDeflateOffer] = [.standard],
        threshold: Int = WebSocketCompression.standardThreshold,
        memoryLevel: Int = 8
    ) {
        self.offers = offers
        self.threshold = threshold
        self.memoryLevel = memoryLevel
    }

    /// The default: offer `permessage-deflate; client_max_window_bits`, compress messages of 128 bytes or more.
    public static let standard = CompressionOptions()

    /// Checks the offers and numbers.
    /// - Throws: `WebSocketConfigurationError` naming the first bad property (under `compression.`).
    public func validate() throws(WebSocketConfigurationError) {
        guard !self.offers.isEmpty else {
            throw WebSocketConfigurationError(property: "compression.offers", requirement: "at least one", value: "[]")
        }
        for (index, offer) in self.offers.enumerated() {
            do throws(WireUsageError) {
                try offer.validate()
            } catch {
                let parameter: String
                if case .invalidHandshakeField(let name) = error { parameter = name } else { parameter = "\(error)" }
                throw WebSocketConfigurationError(
                    property: "compression.offers[\(index)].\(parameter)",
                    requirement: "window bits in 9...15 (zlib cannot compress with 8)",
                    value: parameter == "server_max_window_bits"
                        ? "\(offer.serverMaxWindowBits ?? 0)" : "\(offer.clientMaxWindowBits)")
            }
        }
        guard self.threshold >= 0 else {
            throw WebSocketConfigurationError(
                property: "compression.threshold", requirement: "at least 0", value: "\(self.threshold)")
        }
        guard (1...9).contains(self.memoryLevel) else {
            throw WebSocketConfigurationError(
                property: "compression.memoryLevel", requirement: "1...9", value: "\(self.memoryLevel)")
        }
    }

    /// The `Sec-WebSocket-Extensions` header offering `offers`.
    var header: (name: String, value: String) {
        ("Sec-WebSocket-Extensions", PerMessageDeflate.offerHeader(self.offers))
    }

    /// The engine's settings once the server agreed to `parameters`.
    func engineCompression(_ parameters: PerMessageDeflateParameters) -> WebSocketCompression {
        WebSocketCompression(parameters: parameters, threshold: self.threshold, memoryLevel: self.memoryLevel)
    }
}
