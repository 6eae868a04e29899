/// Where a session is, as a UI would show it.
public enum SessionPhase: Equatable, Hashable, Sendable, CustomStringConvertible {
    /// Not started, or stopped by the user.
    case stopped
    /// A transport was requested (`.openTransport`) and has not opened yet.
    case connecting
    /// A transport is open.
    case open
    /// Backing off until `retryAt` before the next attempt.
    case waiting
    /// The network path is unavailable: no attempt is made and none is counted until it returns.
    case offline
    /// The app is in the background (a transport may be kept with `LifecyclePolicy.keepAndProbe`).
    case suspended
    /// A non-retryable failure (see `SessionMachine.failure`); stays until the user starts again.
    case failed

    /// The case as Swift spells it (`open`, `waiting`), so that a printed state reads like the docs.
    public var description: String {
        switch self {
        case .stopped: "stopped"
        case .connecting: "connecting"
        case .open: "open"
        case .waiting: "waiting"
        case .offline: "offline"
        case .suspended: "suspended"
        case .failed: "failed"
        }
    }
}
