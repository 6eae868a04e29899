/// How much a log record matters, on the scale of swift-log's `Logger.Level` (without `critical`: nothing a session
/// does is): each record has one (`LogRecord.level`), and a log sink passes on those at or above its minimum.
public enum LogLevel: Int, Comparable, CaseIterable, Sendable, CustomStringConvertible {
    /// Every heartbeat and message: `ping`, `pong`, `message` records.
    case trace
    /// The machinery: `greeting`, `pong_deadline_moved`, `reading_held`, `reading_resumed`, `stale`.
    case debug
    /// The session's course: `connecting`, `redirected`, `retry_scheduled`, `reconnect_requested`, `background`,
    /// `foreground`, `stopped`, and a close the app asked for (`user_stopped`, `entered_background`,
    /// `handed_over`).
    case info
    /// Normal but significant: `opened`, a `path` change, a `handover` step.
    case notice
    /// A connection lost or an attempt failed; the session retries: every other `closed` record.
    case warning
    /// The session stopped for good: a `closed` record into `.failed`, and `gave_up`.
    case error

    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The level's name, as swift-log spells it: `trace`, `debug`, `info`, `notice`, `warning`, `error`.
    public var description: String {
        switch self {
        case .trace: "trace"
        case .debug: "debug"
        case .info: "info"
        case .notice: "notice"
        case .warning: "warning"
        case .error: "error"
        }
    }
}

extension LogRecord {
    /// How much this record matters (see `LogLevel` for each kind's): a `closed` record depends on its reason and on
    /// where the session went (a close the app asked for is `info`, one into `.failed` is `error`).
    public var level: LogLevel {
        switch self.event {
        case .ping, .pong, .message:
            .trace
        case .greeting, .pongDeadlineMoved, .readingHeld, .readingResumed, .stale:
            .debug
        case .connecting, .redirected, .retryScheduled, .reconnectRequested, .background, .foreground, .stopped:
            .info
        case .opened, .path, .handover:
            .notice
        case .gaveUp:
            .error
        case .closed(let reason, _):
            switch reason {
            case _ where self.to == .failed: .error
            case .userStopped, .enteredBackground, .handedOver: .info
            case .pongTimeout, .pingFailed, .probeTimeout, .connectTimeout, .receiveFailed, .peerClosed,
                .connectFailed, .handshakeRejected, .handshakeInvalid, .redirectFailed, .proxyRejected, .socksRejected,
                .proxyUnreachable, .tlsFailed, .protocolViolation, .requestFailed:
                .warning
            }
        }
    }
}
