/// Watches the network path and reports it as `PathSnapshot`s.
///
/// A monitor is one-shot, like `NWPathMonitor`: after `cancel()` it cannot be started again; create a new one.
/// To restart, the owner bumps its hint generation (`NetworkHint.restart()`), cancels the old monitor, creates a
/// new one and starts it with a handler that tags every snapshot with the new generation; the generation is
/// checked again after the hop into the owner's serial domain, because a delivery already in flight can still
/// arrive there after `cancel()`.
public protocol PathMonitor: Sendable {
    /// Starts watching. The handler receives the current path once, right after start, then one snapshot per
    /// visible change (a snapshot equal to the previous one is not delivered).
    ///
    /// Calls to the handler never overlap and arrive in order; they may come from the thread that calls
    /// `start` (for the current path) or from the monitor's own thread or queue. The handler must not block:
    /// hand the snapshot on (for example to an `AsyncStream` continuation, which keeps the order).
    /// A second `start`, or a `start` after `cancel()`, does nothing.
    func start(_ handler: @escaping @Sendable (PathSnapshot) -> Void)

    /// Stops watching. Once `cancel()` returns, the handler is not called again (a call in progress on another
    /// thread finishes first; `cancel()` from inside the handler is allowed). Cancelling twice is harmless.
    func cancel()
}
