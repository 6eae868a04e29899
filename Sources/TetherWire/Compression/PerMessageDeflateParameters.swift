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
