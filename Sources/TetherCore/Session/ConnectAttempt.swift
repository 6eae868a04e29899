/// One address a connection attempt tried and how that try ended. A connect that races several addresses (Happy
/// Eyeballs) and fails reports every address it tried, in the order the tries ended.
///
/// The address is numeric, with its port (`192.0.2.2:80`, `[2001:db8::2]:443`): the origin's (or the
/// proxy's) as the resolver gave it, never a name, a URL or anything the peer sent, so records may carry it.
public struct ConnectAttempt: Hashable, Sendable, CustomStringConvertible {
    /// The numeric address and port tried.
    public var address: String
    /// How the try at that address ended.
    public var failure: ConnectFailure

    public init(address: String, failure: ConnectFailure) {
        self.address = address
        self.failure = failure
    }

    /// For example `192.0.2.2:80: refused`.
    public var description: String { "\(self.address): \(self.failure)" }
}
