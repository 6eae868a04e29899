import TetherCore
import TetherWire

// The value types of the pure modules that the client's API names (in its configuration, its events and its log
// records), reachable with `import Tether` alone: an app that uses the client imports one module.
//
// Typealiases, not `@_exported import TetherCore`: re-exporting would hand every app the session machine, the
// heartbeat, the outbox and their actions too, which only the client drives, and `@_exported` is an underscored
// attribute with no documented contract. A typealias names the same type, so values pass between `Tether` and
// `TetherCore` unchanged, and a file that imports both sees one type (a module's declaration shadows the same
// name from a module it imports). `scripts/user-package.sh` builds a package that imports only `Tether` against
// the README's example; a type that an event or a setting starts to name belongs in this list.

/// Where a session is, as a UI would show it (`ConnectionState.phase`).
public typealias SessionPhase = TetherCore.SessionPhase
/// What the session does when the app goes to the background (`WebSocketConfiguration.lifecycle`).
public typealias LifecyclePolicy = TetherCore.LifecyclePolicy
/// What an interface switch while open does (`WebSocketConfiguration.interfaceSwitch`).
public typealias InterfaceSwitchPolicy = TetherCore.InterfaceSwitchPolicy
/// Why a connection closed or failed (`WebSocketEvent.stateChanged`'s cause, `ConnectionState.failure`).
public typealias CloseReason = TetherCore.CloseReason
/// How a connect attempt failed before any handshake (`CloseReason.connectFailed`, `TransportEnd.connectFailed`).
public typealias ConnectFailure = TetherCore.ConnectFailure
/// How a transport connection ended (`TransportEvent.ended`).
public typealias TransportEnd = TetherCore.TransportEnd
/// Exponential backoff with jitter between attempts (`WebSocketConfiguration.backoff`).
public typealias BackoffPolicy = TetherCore.BackoffPolicy
/// When to stop retrying, or how long to wait (`WebSocketConfiguration.retryPolicy`).
public typealias RetryPolicy = TetherCore.RetryPolicy
/// What `RetryPolicy.decide` is asked about: the attempt, the time since the first failure, the failure.
public typealias RetryContext = TetherCore.RetryContext
/// What `RetryPolicy.decide` answers: retry after a delay, or stop.
public typealias RetryDecision = TetherCore.RetryDecision
/// One privacy-safe log record (`WebSocketEvent.record`).
public typealias LogRecord = TetherCore.LogRecord
/// How much a log record matters, on swift-log's scale (`LogRecord.level`, `LogSink.minimumLevel`).
public typealias LogLevel = TetherCore.LogLevel
/// Why a redirect of the opening handshake was not followed (`CloseReason.redirectFailed`).
public typealias RedirectFailure = TetherCore.RedirectFailure
/// The network-path hint (`ConnectionState.path`).
public typealias PathState = TetherCore.PathState
/// What a UI shows about connectivity (`ConnectionState.connectivity`).
public typealias ConnectivityStatus = TetherCore.ConnectivityStatus
/// How the latest request ended (`ConnectivityStatus.serverUnreachable`).
public typealias RequestOutcome = TetherCore.RequestOutcome
/// High and low levels of a byte queue (`WebSocketConfiguration.inboundWatermarks`, `.outboundWatermarks`).
public typealias Watermarks = TetherWire.Watermarks
/// Whether one message is compressed when the connection negotiated permessage-deflate (`WebSocketClient.send`'s
/// `compression`): `.automatic` (at least `CompressionOptions.threshold` bytes), `.always` or `.never`.
public typealias MessageCompression = TetherWire.MessageCompression

/// Why a queued message left the outbox without being written in full (`WebSocketEvent.outboxDropped`).
public typealias OutboxDropReason = TetherCore.OutboxDropReason
/// Why a SOCKS5 proxy refused the tunnel (`TransportEnd.socksRejected`, `CloseReason.socksRejected`).
public typealias SOCKSRefusal = TetherCore.SOCKSRefusal
/// One address a connect attempt tried and how it failed (`ConnectFailure`'s list of addresses tried).
public typealias ConnectAttempt = TetherCore.ConnectAttempt
/// The bounds of a count of messages and their payload bytes (`WebSocketConfiguration.outboxLimits`,
/// `.unconfirmedLimits`).
public typealias OutboxLimits = TetherCore.OutboxLimits
/// A message's stream and sequence number in a feed (`FeedOptions.read`).
public typealias FeedPosition = TetherCore.FeedPosition
/// Numbers a feed skipped (`DeliveryEvent.gap`).
public typealias FeedGap = TetherCore.FeedGap
/// How many feed streams and open gaps a client keeps (`FeedOptions.limits`).
public typealias FeedLimits = TetherCore.FeedLimits
/// Why the client gave up on an acknowledged send (`DeliveryEvent.gaveUp`).
public typealias DeliveryGiveUpReason = TetherCore.DeliveryGiveUpReason
/// What acknowledged sends and feeds did so far (`WebSocketClient.deliveryCounts`).
public typealias DeliveryCounts = TetherCore.DeliveryCounts
/// What a connection has received, for a heartbeat that tells a busy link from a dead one
/// (`TransportConnection.inboundProgress()`).
public typealias InboundProgress = TetherCore.InboundProgress
/// The session's timing and policies, one unit (`WebSocketConfiguration.session`; each setting also reads and writes
/// as a property of the configuration).
public typealias SessionConfiguration = TetherCore.SessionConfiguration
/// A setting out of range, as `SessionConfiguration.settingOutOfRange` and `BackoffPolicy.fieldOutOfRange` name it.
public typealias SettingOutOfRange = TetherCore.SettingOutOfRange
/// What both ends agreed for permessage-deflate (`HandshakeResult.compression`).
public typealias PerMessageDeflateParameters = TetherWire.PerMessageDeflateParameters
/// How long each step of a connection attempt took (`LogRecord.timings`, `TransportConnection.attemptTimings()`).
public typealias AttemptTimings = TetherCore.AttemptTimings
