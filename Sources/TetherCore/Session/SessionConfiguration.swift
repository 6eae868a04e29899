/// The session's timing and policies. All times are integer milliseconds.
public struct SessionConfiguration: Equatable, Sendable {
    /// From the open (or the last pong) to the next ping. Default 15_000.
    public var heartbeatInterval: Int
    /// How long a pong may take; a pong at exactly the deadline is late. Default 5_000.
    public var heartbeatTimeout: Int
    /// The machine-owned deadline for TCP, TLS and the opening handshake together. Default 10_000.
    public var connectTimeout: Int
    /// How long the liveness probe after a path change or on foreground may take. Default 2_000.
    public var probeTimeout: Int
    /// A connection open this long (or answering its first pong) proved healthy: attempts reset. Default 30_000.
    public var stablePeriod: Int
    /// Delays between failed attempts. Default `BackoffPolicy()` (1 s, ×2, cap 60 s, +0–50 % jitter).
    public var backoff: BackoffPolicy
    /// The least wait after the server asked us to come back later (close 1012/1013, HTTP 429/503) without a
    /// `Retry-After`. Default 5_000. A `Retry-After` is honoured even above the backoff cap, up to
    /// `maximumRetryAfter`.
    public var throttleDelay: Int
    /// The longest wait taken from the peer's `Retry-After` (HTTP 429/503): a longer one is cut to this, so that
    /// a server (or a broken proxy) cannot park the session for years. Default 300_000 (5 minutes); at least 0.
    /// The backoff still applies when it is longer.
    public var maximumRetryAfter: Int
    /// What happens in the background. Default `.closeInBackground`.
    public var lifecycle: LifecyclePolicy
    /// Whether `messageReceived` leaves a `.message` log record (its size, never its payload). Default false: a
    /// driver reports the message itself, and a busy feed would otherwise produce a record per message.
    public var recordsMessages: Bool
    /// Whether every open first sends a greeting (`.sendGreeting`, then `greetingSent`) before the session is open.
    /// Default false.
    public var greets: Bool = false
    /// How long `enteredBackground` waits for the close frame to be sent (`closeWaitGeneration`). Default 2_000.
    public var closeTimeout = 2_000
    /// The bounds of the outbox (messages queued for a connection that is not open yet). Default `OutboxLimits()`.
    public var outboxLimits = OutboxLimits()
    /// When to stop retrying and how long to wait, beyond the backoff. Default `RetryPolicy()`: retry forever.
    public var retryPolicy = RetryPolicy()

    public init(
        heartbeatInterval: Int = 15_000,
        heartbeatTimeout: Int = 5_000,
        connectTimeout: Int = 10_000,
        probeTimeout: Int = 2_000,
        stablePeriod: Int = 30_000,
        backoff: BackoffPolicy = BackoffPolicy(),
        throttleDelay: Int = 5_000,
        maximumRetryAfter: Int = 300_000,
        lifecycle: LifecyclePolicy = .closeInBackground,
        recordsMessages: Bool = false
    ) {
        precondition(heartbeatTimeout > 0 && connectTimeout > 0 && probeTimeout > 0, "timeouts must be positive")
        precondition(maximumRetryAfter >= 0, "maximumRetryAfter must not be negative")
        self.heartbeatInterval = heartbeatInterval
        self.heartbeatTimeout = heartbeatTimeout
        self.connectTimeout = connectTimeout
        self.probeTimeout = probeTimeout
        self.stablePeriod = stablePeriod
        self.backoff = backoff
        self.throttleDelay = throttleDelay
        self.maximumRetryAfter = maximumRetryAfter
        self.lifecycle = lifecycle
        self.recordsMessages = recordsMessages
    }
}
