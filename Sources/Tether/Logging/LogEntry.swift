import TetherCore

/// One log record as a logger takes it: a level, a message and metadata (`LogSink`). Built from the record's own
/// fields, which hold no payload, header value, token, query or user info.
public struct LogEntry: Sendable {
    /// The record's level (`LogRecord.level`).
    public var level: LogLevel
    /// What happened, as `tether connect --events jsonl` names the record's kind: `connecting`, `redirected`,
    /// `opened`, `closed`, `retry_scheduled`, ...; `records_dropped` for the entry that counts lost records.
    public var message: String
    /// The record's fields, with the names of `tether connect --events jsonl`: `t` (the client's monotonic time, ms),
    /// `gen`, `from`, `to`, then the event's own (`reason`, `detail`, `code`, `status`, `location`, `rtt_ms`,
    /// `attempt`, `delay_ms`, ...), then an attempt's timings on its `opened` and failure `closed` records
    /// (`resolve_ms`, `tcp`, `proxy_ms`, `tls_ms`, `tls`, `upgrade_ms`, `greeting_ms`: `AttemptTimings.fields`);
    /// `dropped` for the entry that counts lost records. Each value prints as itself.
    public var metadata: [(key: String, value: LogRecord.Event.FieldValue)]
    /// The record, for a logger that wants more than the metadata; nil for the entry that counts lost records.
    public var record: LogRecord?

    /// The entry of `record`.
    public init(_ record: LogRecord) {
        self.level = record.level
        self.message = record.kind.rawValue
        var metadata: [(key: String, value: LogRecord.Event.FieldValue)] = [
            ("t", .number(record.time)), ("gen", .number(record.generation)),
            ("from", .name(record.from.description)), ("to", .name(record.to.description)),
        ]
        for (name, value) in record.event.fields {
            metadata.append((name, value))
        }
        for (name, value) in record.timings?.fields ?? [] {
            metadata.append((name, value))
        }
        self.metadata = metadata
        self.record = record
    }

    /// The entry that says `count` records were dropped before the next one, because the sink fell behind
    /// (`LogSink.capacity`): level `warning`, message `records_dropped`, metadata `dropped`.
    public static func droppedRecords(_ count: Int) -> LogEntry {
        LogEntry(level: .warning, message: "records_dropped", metadata: [("dropped", .number(count))], record: nil)
    }

    private init(
        level: LogLevel, message: String, metadata: [(key: String, value: LogRecord.Event.FieldValue)],
        record: LogRecord?
    ) {
        self.level = level
        self.message = message
        self.metadata = metadata
        self.record = record
    }

    /// The metadata on one line, `key=value` separated by spaces, a value with a space in quotes
    /// (`t=1520 gen=3 from=connecting to=waiting reason=redirect_failed detail="redirect loop" code=302`): for a
    /// logger that takes one string (`os.Logger`).
    public var metadataText: String {
        self.metadata.map { key, value in
            let text = value.description
            return text.contains(" ") ? "\(key)=\"\(text)\"" : "\(key)=\(text)"
        }.joined(separator: " ")
    }
}
