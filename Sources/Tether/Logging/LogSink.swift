import TetherCore

/// Where a client's log records go besides `events`, in the shape loggers take: each record at or above
/// `minimumLevel`, as a `LogEntry` (a level, a message, metadata), handed to `write`. Set it as
/// `WebSocketConfiguration.logSink`; docs/logging.md shows adapters for swift-log's `Logger` and `os.Logger`.
///
/// `write` never runs on the client: the client puts each record in a queue of at most `capacity` records and goes
/// on, and one task per client calls `write` with them, in order, one at a time. A logger that falls behind loses the
/// oldest records waiting, never holds up a connection; the next entry it gets is then one that says how many were
/// lost (`LogEntry.droppedRecords`). Records hold no secret (no payload, header value, token, query or user info), so
/// an entry may be logged as public.
public struct LogSink: Sendable {
    /// The least level passed on. Default `.info`: the session's course, losses and failures, not every heartbeat.
    public var minimumLevel: LogLevel
    /// The most records waiting for `write`; beyond, the oldest is dropped (and counted). At least 1. Default 256.
    public var capacity: Int
    /// Called with each entry, in order, one at a time, on a task of the client's (never on its event loop).
    public var write: @Sendable (LogEntry) -> Void

    /// - Parameters: as the properties.
    public init(
        minimumLevel: LogLevel = .info, capacity: Int = 256, write: @escaping @Sendable (LogEntry) -> Void
    ) {
        self.minimumLevel = minimumLevel
        self.capacity = capacity
        self.write = write
    }
}
