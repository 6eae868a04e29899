import Synchronization
import TetherCore

/// Runs a client's `LogSink`: the client hands each record over (`deliver`, on its own executor, without waiting),
/// and one task calls the sink's `write` with them, in order, off the client. The queue between them holds at most
/// `LogSink.capacity` records (the newest; the oldest are dropped and counted), so a logger that falls behind costs
/// the client nothing but a count (docs/ARCHITECTURE.md §8).
final class LogSinkDelivery: Sendable {
    private let minimumLevel: LogLevel
    private let queue: AsyncStream<LogRecord>.Continuation
    private let drops: DropCount

    /// Records dropped since the writer last looked; shared with the writing task.
    private final class DropCount: Sendable {
        let count = Atomic<Int>(0)
    }

    init(_ sink: LogSink) {
        self.minimumLevel = sink.minimumLevel
        let (records, queue) = AsyncStream.makeStream(
            of: LogRecord.self, bufferingPolicy: .bufferingNewest(max(1, sink.capacity)))
        self.queue = queue
        let drops = DropCount()
        self.drops = drops
        let write = sink.write
        // The writer holds the queue's reading end and the sink, never the client: it ends when the client finishes
        // the queue, after writing what was left in it.
        Task.detached {
            for await record in records {
                let dropped = drops.count.exchange(0, ordering: .relaxed)
                if dropped > 0 { write(.droppedRecords(dropped)) }
                write(LogEntry(record))
            }
            let dropped = drops.count.exchange(0, ordering: .relaxed)
            if dropped > 0 { write(.droppedRecords(dropped)) }  // lost behind the last one written
        }
    }

    /// Queues `record` for the sink when its level is at least the sink's minimum. Never waits.
    func deliver(_ record: LogRecord) {
        guard record.level >= self.minimumLevel else { return }
        if case .dropped = self.queue.yield(record) {
            self.drops.count.add(1, ordering: .relaxed)
        }
    }

    /// No more records: the writer writes what is queued and ends.
    func finish() {
        self.queue.finish()
    }
}
