/// The session's timing and policies: the one configuration of a session, declared, defaulted and checked here once.
/// `WebSocketConfiguration` in `Tether` holds one (`session`) and reads and writes each setting as a property of its
/// own (`configuration.heartbeatInterval`). Durations are `Duration`, converted to whole milliseconds (rounded down)
/// once, when a `SessionMachine` is made; `settingOutOfRange` is the one validation of every setting here.
public struct SessionConfiguration: Equatable, Sendable {
    /// Time between a pong (or the open) and the next ping. Default 15 s; at least 1 ms.
    public var heartbeatInterval: Duration
    /// How long a ping may wait for its pong before the connection is closed as dead (`pong_timeout`); a pong at
    /// exactly the deadline is late. Default 5 s; at least 1 ms.
    public var heartbeatTimeout: Duration
    /// How long an attempt may take: a request provider, TCP, TLS, the opening handshake and the greeting together.
    /// Default 10 s; at least 1 ms. The session machine owns this deadline (a close with reason `connect_timeout`); a
    /// transport under a client gets a later backstop only (`TransportRequest.connectTimeout`).
    public var connectTimeout: Duration
    /// Deadline of the liveness probe sent after a path change or on returning to the foreground. Default 2 s; at
    /// least 1 ms.
    public var probeTimeout: Duration
    /// How long a connection must stay open (without a pong) before it counts as healthy and the attempt counter
    /// resets. The first pong resets it sooner. Default 30 s; at least 0.
    public var stablePeriod: Duration
    /// Exponential backoff with jitter between failed attempts. Default `BackoffPolicy()`: base 1 s, factor 2, cap
    /// 60 s, jitter 0–50 %.
    public var backoff: BackoffPolicy
    /// The least wait after the server asked to come back later (close 1012/1013, HTTP 429/503) without a
    /// `Retry-After`. Default 5 s; at least 0. A `Retry-After` is honoured, even above the backoff cap, up to
    /// `maximumRetryAfter`.
    public var retryLaterDelay: Duration
    /// The longest wait a server's `Retry-After` (HTTP 429/503) can impose; a longer one is cut to this, so that a
    /// server or a broken proxy asking for `Retry-After: 999999999` (31 years) cannot park the session. Both forms
    /// count: delay-seconds of any length, and an HTTP-date measured from the response's `Date` (or, without one,
    /// from the wall clock). Default 5 minutes; at least 0 (0 ignores the server's wait). The backoff still applies
    /// when it is longer.
    public var maximumRetryAfter: Duration
    /// What happens when the app goes to the background. Default `.closeInBackground`: close with 1001 and
    /// reconnect on return.
    public var lifecycle: LifecyclePolicy
    /// Whether each received message also leaves a log record (kind `.message`: its size and time, never its
    /// payload), after the message itself. Default false: the message already reports it, and a busy feed would
    /// otherwise double what its consumer reads. Turn it on for a log or a timeline that should show traffic
    /// (`tether check` and `tether connect --events-jsonl` do).
    public var recordsMessages: Bool
    /// Whether each ping sent and each pong accepted leaves a log record (`.ping`, `.pong(rtt:)`, with the round
    /// trip). Default true. Off, a heartbeat leaves no record while it succeeds (a client still reports each round
    /// trip, as `.roundTrip`, and a missed pong still ends the connection with its `closed` record): for many
    /// connections held open, where the two records per interval and connection are most of what a consumer reads
    /// (and wakes up for).
    public var recordsHeartbeats: Bool = true
    /// Whether every open first sends a greeting (`.sendGreeting`, then `greetingSent`) before the session is open.
    /// Default false; `WebSocketClient` sets it when its configuration has a `greeting`.
    package var greets: Bool = false
    /// Whether a request provider makes each attempt's request (URL, headers): then a 401 or 403 on the upgrade asks
    /// it once more, at once, before the attempt counts as failed (`transportEnded`). Default false;
    /// `WebSocketClient` sets it when its configuration has a `requestProvider`.
    package var providesRequests: Bool = false
    /// How long to wait for the server's close frame after sending ours (then the connection is dropped), and how
    /// long `enteredBackground` waits for our close frame to be sent (`closeWaitEnded()`). Default 2 s; at least 0.
    public var closeTimeout: Duration = .seconds(2)
    /// The bounds of the outbox of `send(_:policy: .queued(...))` (messages queued for a connection that is not
    /// open yet): at most this many messages and payload bytes wait; a queued send beyond them is refused at once
    /// (`WebSocketSendError.outboxFull`). Default `OutboxLimits()`: 1,000 and 1 MiB.
    public var outboxLimits = OutboxLimits()
    /// When the session stops retrying and fails visibly (`.failed` with the last failure, a `gave_up` record):
    /// after `maximumAttempts` consecutive failed attempts or `maximumElapsed` of failing, or when its `decide` hook
    /// says `.stop`; the hook may also choose each delay. Default `RetryPolicy()`: retry forever.
    public var retryPolicy = RetryPolicy()
    /// What happens when the path moves to other interfaces while the session is open (Wi-Fi to cellular): `.probe`
    /// (the default) checks the open connection and reconnects only when it is dead; `.makeBeforeBreak(drain:)`
    /// opens the next connection on the new path first and moves the session to it without leaving `.open` (two
    /// connections overlap for a moment; a message broadcast on both arrives twice, each naming its generation).
    /// A drain below 0 is refused. See the README's "Switching networks".
    public var interfaceSwitch = InterfaceSwitchPolicy.probe
    /// The bounds of acknowledged sends and feeds (opt-in, docs/delivery.md). Default `DeliverySettings()`.
    /// `WebSocketClient` sets it from its configuration's `delivery`, where these settings are declared (beside the
    /// app's functions that read messages), so that they are not a second, public, setting here.
    package var delivery = DeliverySettings()

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
        if var field = self.backoff.fieldOutOfRange {
            field.setting = "backoff." + field.setting
            return field
        }
        if let maximum = self.retryPolicy.maximumAttempts, maximum < 1 {
            return SettingOutOfRange(
                setting: "retryPolicy.maximumAttempts", requirement: "at least 1", value: "\(maximum)")
        }
        if let maximum = self.retryPolicy.maximumElapsed, maximum < .zero {
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

    public init(setting: String, requirement: String, value: String) {
        self.setting = setting
        self.requirement = requirement
        self.value = value
    }
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
    /// `retryPolicy.maximumElapsed`, or nil for no limit.
    var maximumElapsed: Int?

    init(_ configuration: SessionConfiguration) {
        self.heartbeatInterval = configuration.heartbeatInterval.milliseconds
        self.heartbeatTimeout = configuration.heartbeatTimeout.milliseconds
        self.connectTimeout = configuration.connectTimeout.milliseconds
        self.probeTimeout = configuration.probeTimeout.milliseconds
        self.stablePeriod = configuration.stablePeriod.milliseconds
        self.retryLaterDelay = configuration.retryLaterDelay.milliseconds
        self.maximumRetryAfter = configuration.maximumRetryAfter.milliseconds
        self.closeTimeout = configuration.closeTimeout.milliseconds
        self.maximumElapsed = configuration.retryPolicy.maximumElapsed?.milliseconds
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
