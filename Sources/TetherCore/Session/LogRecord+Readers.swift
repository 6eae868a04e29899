/// One field of a record, read without a `switch` over `event`: nil where the record's event has no such field. For
/// tests and tools that look a field up across many records (`#expect(close?.reason == .pongTimeout)`).
extension LogRecord {
    /// The close reason of a `.closed` or `.gaveUp` record.
    public var reason: CloseReason? {
        switch self.event {
        case .closed(let reason, _), .gaveUp(let reason, _): reason
        default: nil
        }
    }

    /// The close code (or HTTP status) of a `.closed` record.
    public var code: Int? {
        if case .closed(_, let code) = self.event { code } else { nil }
    }

    /// The round trip of a `.pong` record, in ms.
    public var rtt: Int? {
        if case .pong(let rtt) = self.event { rtt } else { nil }
    }

    /// The failed attempts of a `.connecting`, `.retryScheduled` or `.gaveUp` record.
    public var attempt: Int? {
        switch self.event {
        case .connecting(let attempt), .retryScheduled(let attempt, _), .gaveUp(_, let attempt): attempt
        default: nil
        }
    }

    /// The wait of a `.retryScheduled` record, in ms.
    public var delay: Int? {
        if case .retryScheduled(_, let delay) = self.event { delay } else { nil }
    }

    /// The payload size of a `.message` record.
    public var bytes: Int? {
        if case .message(let bytes) = self.event { bytes } else { nil }
    }

    /// The path state of a `.path` record.
    public var path: PathState? {
        if case .path(let state) = self.event { state } else { nil }
    }

    /// What a `.stale` record ignored.
    public var ignored: Ignored? {
        if case .stale(let ignored) = self.event { ignored } else { nil }
    }
}
