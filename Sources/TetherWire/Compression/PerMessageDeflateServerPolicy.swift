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
