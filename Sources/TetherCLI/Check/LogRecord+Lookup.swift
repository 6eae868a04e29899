import TetherCore

extension Array where Element == LogRecord {
    /// The records of `kind` (and of `generation`, when given), in order.
    func of(_ kind: LogRecord.Kind, generation: Int? = nil) -> [LogRecord] {
        self.filter { $0.kind == kind && (generation == nil || $0.generation == generation) }
    }

    /// The first record of `kind` (and of `generation`, when given).
    func first(_ kind: LogRecord.Kind, generation: Int? = nil) -> LogRecord? {
        self.first { $0.kind == kind && (generation == nil || $0.generation == generation) }
    }
}
