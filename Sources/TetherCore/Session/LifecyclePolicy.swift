/// What the session does when the app goes to the background, where timers are not guaranteed.
public enum LifecyclePolicy: Equatable, Hashable, Sendable, CustomStringConvertible {
    /// Close with 1001 (going away) and reconnect on foreground. The default: a heartbeat is no background
    /// keep-alive.
    case closeInBackground
    /// Keep an open transport, pause the heartbeat, and probe it on foreground (reconnect at once if the probe fails).
    case keepAndProbe

    /// The case as Swift spells it (`closeInBackground`, `keepAndProbe`).
    public var description: String {
        switch self {
        case .closeInBackground: "closeInBackground"
        case .keepAndProbe: "keepAndProbe"
        }
    }
}
