/// Why `WebSocketClient.waitUntilOpen(timeout:)` returned without the session being open.
public enum WebSocketOpenError: Error, Equatable, Sendable {
    /// The timeout passed first; the client goes on trying (its state says how).
    case timedOut
    /// The session failed for good: a non-retryable failure (a 401 handshake rejection, a certificate that does not
    /// verify, ...) or the retry policy gave up; `reason` is the state's `failure`. `start()` or `reconnectNow()`
    /// begins again.
    case failed(CloseReason)
    /// The client is stopped: it was never started, or `stop()` was called while waiting.
    case stopped
    /// The waiting task was cancelled; the client is not affected.
    case cancelled
}
