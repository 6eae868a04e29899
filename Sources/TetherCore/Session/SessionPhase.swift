/// Where a session is, as a UI would show it.
public enum SessionPhase: Equatable, Hashable, Sendable {
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
}
