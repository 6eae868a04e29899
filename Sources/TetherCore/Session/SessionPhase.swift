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

/// What the session does when the app goes to the background, where timers are not guaranteed.
public enum LifecyclePolicy: Equatable, Hashable, Sendable {
    /// Close with 1001 (going away) and reconnect on foreground. The default: a heartbeat is no background
    /// keep-alive.
    case closeInBackground
    /// Keep an open transport, pause the heartbeat, and probe it on foreground (reconnect at once if the probe fails).
    case keepAndProbe
}
