/// What the session does when the path moves to other interfaces while a connection is open (Wi-Fi to cellular,
/// `eth0` to `eth1`): a usable path report whose interfaces differ from the previous usable one.
public enum InterfaceSwitchPolicy: Equatable, Hashable, Sendable, CustomStringConvertible {
    /// Probe the open connection (a ping with `probeTimeout`) and reconnect only when the probe fails: break before
    /// make. The session is not open from the failed probe until the new handshake completes.
    case probe
    /// Open a second connection (a new generation) on the new path at once, move the session to it once it is open,
    /// and close the old one with 1001 `drain` later, delivering what it receives until its end. The session stays
    /// open throughout. `drain` is at least 0; default `defaultDrain`.
    case makeBeforeBreak(drain: Duration = InterfaceSwitchPolicy.defaultDrain)

    /// The drain of `.makeBeforeBreak` when none is chosen. What the server wrote to the old connection before it
    /// read the close arrives whatever the drain (the client reads it until its closing handshake ends); the drain
    /// lets the server answer, on the old connection, requests sent on it just before the move (its turn plus a
    /// mobile round trip), and costs what the server broadcasts meanwhile, received twice. See the README.
    public static let defaultDrain: Duration = .milliseconds(500)

    /// The case as Swift spells it, with its drain: `probe`, `makeBeforeBreak(drain: 0.5 seconds)`.
    public var description: String {
        switch self {
        case .probe: "probe"
        case .makeBeforeBreak(let drain): "makeBeforeBreak(drain: \(drain))"
        }
    }
}
