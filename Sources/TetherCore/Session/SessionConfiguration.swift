/// The session's timing and policies: the one configuration of a session, which `WebSocketConfiguration` in
/// `Tether` names the same way. Durations are `Duration`, converted to whole milliseconds (rounded down) once,
/// when a `SessionMachine` is made; `settingOutOfRange` is the one validation of every setting here.
public struct SessionConfiguration: Equatable, Sendable {
    /// From the open (or the last pong) to the next ping. Default 15 s; at least 1 ms.
    public var heartbeatInterval: Duration
    /// How long a pong may take; a pong at exactly the deadline is late. Default 5 s; at least 1 ms.
    public var heartbeatTimeout: Duration
    /// The machine-owned deadline for TCP, TLS and the opening handshake together. Default 10 s; at least 1 ms.
    public var connectTimeout: Duration
    /// How long the liveness probe after a path change or on foreground may take. Default 2 s; at least 1 ms.
    public var probeTimeout: Duration
    /// A connection open this long (or answering its first pong) proved healthy: attempts reset. Default 30 s;
    /// at least 0.
    public var stablePeriod: Duration
    /// Delays between failed attempts. Default `BackoffPolicy()` (1 s, ×2, cap 60 s, +0–50 % jitter).
    public var backoff: BackoffPolicy
    /// The least wait after the server asked us to come back later (close 1012/1013, HTTP 429/503) without a
    /// `Retry-After`. Default 5 s; at least 0. A `Retry-After` is honoured even above the backoff cap, up to
    /// `maximumRetryAfter`.
    public var retryLaterDelay: Duration
    /// The longest wait taken from the peer's `Retry-After` (HTTP 429/503): a longer one is cut to this, so that
    /// a server (or a broken proxy) cannot park the session for years. Default 5 minutes; at least 0. The backoff
    /// still applies when it is longer.
    public var maximumRetryAfter: Duration
    /// What happens in the background. Default `.closeInBackground`.
    public var lifecycle: LifecyclePolicy
    /// Whether `messageReceived` leaves a `.message` log record (its size, never its payload). Default false: a
    /// driver reports the message itself, and a busy feed would otherwise produce a record per message.
    public var recordsMessages: Bool
    /// Whether each ping sent and each pong accepted leaves a log record (`.ping`, `.pong(rtt:)`). Default true.
    /// Off, a heartbeat leaves no record while it succeeds (a driver still reports each round trip, and a missed
    /// pong still ends the connection with its `closed` record): for many connections held open, where the two
    /// records per interval and connection are most of what the session reports.
    public var recordsHeartbeats: Bool = true
    /// Whether every open first sends a greeting (`.sendGreeting`, then `greetingSent`) before the session is open.
    /// Default false.
    public var greets: Bool = false
    /// How long `enteredBackground` waits for the close frame to be sent (`closeWaitEnded()`). Default 2 s;
    /// at least 0.
    public var closeTimeout: Duration = .seconds(2)
    /// The bounds of the outbox (messages queued for a connection that is not open yet). Default `OutboxLimits()`.
    public var outboxLimits = OutboxLimits()
    /// When to stop retrying and how long to wait, beyond the backoff. Default `RetryPolicy()`: retry forever.
    public var retryPolicy = RetryPolicy()
    /// What an interface switch while open does. Default `.probe`; `.makeBeforeBreak(drain:)`'s drain is at least 0.
    public var interfaceSwitch = InterfaceSwitchPolicy.probe
    /// The bounds of acknowledged sends and feeds (opt-in, docs/delivery.md). Default `DeliverySettings()`.
    public var delivery = DeliverySettings()

    public init(
        heartbeatInterval: Duration = .seconds(15),
        heartbeatTimeout: Duration = .seconds(5),
        connectTimeout: Duration = .seconds(10),
        probeTimeout: Duration = .seconds(2),
        stablePeriod: Duration = .seconds(30),
        backoff: BackoffPolicy = BackoffPolicy(),
        retryLaterDelay: Duration = .seconds(5),
        maximumRetryAfter: Duration = .seconds(300),
        lifecycle: LifecyclePolicy = .closeInBackground,
        recordsMessages: Bool = false
    ) {
        self.heartbeatInterval = heartbeatInterval
        self.heartbeatTimeout = heartbeatTimeout
        self.connectTimeout = connectTimeout
        self.probeTimeout = probeTimeout
        self.stablePeriod = stablePeriod
        self.backoff = backoff
        self.retryLaterDelay = retryLaterDelay
        self.maximumRetryAfter = maximumRetryAfter
        self.lifecycle = lifecycle
        self.recordsMessages = recordsMessages
    }

    /// The first setting out of range, in declaration order; nil when every one is in range. The machine counts
    /// whole milliseconds, so a timeout under 1 ms (which would round to 0) is out of range like a zero one.
    public var settingOutOfRange: SettingOutOfRange? {
        let atLeastOneMillisecond: [(String, Duration)] = [
            ("heartbeatInterval", self.heartbeatInterval), ("heartbeatTimeout", self.heartbeatTimeout),
            ("connectTimeout", self.connectTimeout), ("probeTimeout", self.probeTimeout),
        ]
        for (setting, duration) in atLeastOneMillisecond where duration < .milliseconds(1) {
            return SettingOutOfRange(setting: setting, requirement: "at least 1 ms", value: "\(duration)")
        }
        let notNegative: [(String, Duration)] = [
            ("stablePeriod", self.stablePeriod), ("retryLaterDelay", self.retryLaterDelay),
            ("maximumRetryAfter", self.maximumRetryAfter), ("closeTimeout", self.closeTimeout),
        ]
        for (setting, duration) in notNegative where duration < .zero {
            return SettingOutOfRange(setting: setting, requirement: "at least 0", value: "\(duration)")
        }
        if let field = self.backoff.fieldOutOfRange {
            return SettingOutOfRange(
                setting: "backoff.\(field.name)", requirement: "at least \(field.minimum)", value: "\(field.value)")
        }
        if let maximum = self.retryPolicy.maximumAttempts, maximum < 1 {
            return SettingOutOfRange(
                setting: "retryPolicy.maximumAttempts", requirement: "at least 1", value: "\(maximum)")
        }
        if let maximum = self.retryPolicy.maximumElapsed, maximum < 0 {
            return SettingOutOfRange(
                setting: "retryPolicy.maximumElapsed", requirement: "at least 0", value: "\(maximum)")
        }
        if case .makeBeforeBreak(let drain) = self.interfaceSwitch, drain < .zero {
            return SettingOutOfRange(setting: "interfaceSwitch.drain", requirement: "at least 0", value: "\(drain)")
        }
        if self.outboxLimits.count < 0 || self.outboxLimits.bytes < 0 {
            return SettingOutOfRange(
                setting: "outboxLimits", requirement: "count and bytes at least 0",
                value: "count \(self.outboxLimits.count), bytes \(self.outboxLimits.bytes)")
        }
        return self.delivery.settingOutOfRange
    }
}

/// A setting of `SessionConfiguration` out of range: its name, what it must be, and the value it had.
public struct SettingOutOfRange: Equatable, Sendable {
    /// The setting as spelled in the configuration, for example `heartbeatTimeout` or `backoff.factor`.
    public var setting: String
    /// What it must be, for example "at least 1 ms".
    public var requirement: String
    /// The value it had.
    public var value: String
}

/// The configuration's durations in whole milliseconds, the unit the machine counts in: converted once.
struct SessionTiming: Equatable, Sendable {
    var heartbeatInterval: Int
    var heartbeatTimeout: Int
    var connectTimeout: Int
    var probeTimeout: Int
    var stablePeriod: Int
    var retryLaterDelay: Int
    var maximumRetryAfter: Int
    var closeTimeout: Int
    /// The drain of `.makeBeforeBreak`, or nil under `.probe`.
    var switchDrain: Int?

    init(_ configuration: SessionConfiguration) {
        self.heartbeatInterval = configuration.heartbeatInterval.milliseconds
        self.heartbeatTimeout = configuration.heartbeatTimeout.milliseconds
        self.connectTimeout = configuration.connectTimeout.milliseconds
        self.probeTimeout = configuration.probeTimeout.milliseconds
        self.stablePeriod = configuration.stablePeriod.milliseconds
        self.retryLaterDelay = configuration.retryLaterDelay.milliseconds
        self.maximumRetryAfter = configuration.maximumRetryAfter.milliseconds
        self.closeTimeout = configuration.closeTimeout.milliseconds
        switch configuration.interfaceSwitch {
        case .probe: self.switchDrain = nil
        case .makeBeforeBreak(let drain): self.switchDrain = drain.milliseconds
        }
    }
}

extension Duration {
    /// Whole milliseconds, rounded toward zero and saturated at `Int.min`/`Int.max`: the unit every pure machine
    /// works in. Package-wide, so that the client and the `tether` command measure with the same conversion.
    package var milliseconds: Int {
        let (seconds, attoseconds) = self.components
        let (whole, overflow) = Int(seconds).multipliedReportingOverflow(by: 1_000)
        let (sum, overflowAgain) = whole.addingReportingOverflow(Int(attoseconds / 1_000_000_000_000_000))
        guard !overflow, !overflowAgain else { return seconds < 0 ? Int.min : Int.max }
        return sum
    }
}
