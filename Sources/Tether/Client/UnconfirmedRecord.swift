import Synchronization
import TetherCore

/// The client's record of what was written to each connection since its last pong (`UnconfirmedWrites`), behind a
/// lock: `send` records a direct write on the sender's thread, without entering the actor, and the actor records
/// pings and applies the machine's notices (`provedAlive`, `connectionLost`). One lock per completed write; nothing
/// at all on a connection that writes nothing.
final class UnconfirmedRecord: Sendable {
    private let record: Mutex<UnconfirmedWrites<WebSocketMessage>>

    init(limits: OutboxLimits) {
        self.record = Mutex(UnconfirmedWrites(limits: limits))
    }

    func opened(generation: Int) {
        self.record.withLock { $0.opened(generation: generation) }
    }

    /// A write to `generation`'s connection completed: kept (or counted) until a pong confirms it. Returns
    /// `.afterLoss` when that connection was reported lost already: the caller reports the message alone.
    func written(_ message: WebSocketMessage, generation: Int) -> UnconfirmedWrites<WebSocketMessage>.Recorded {
        self.record.withLock { $0.written(message, bytes: message.byteCount, generation: generation) }
    }

    func pingSent(_ ping: UInt64, generation: Int) {
        self.record.withLock { $0.pingSent(ping, generation: generation) }
    }

    func confirmed(generation: Int, ping: UInt64) {
        self.record.withLock { $0.confirmed(generation: generation, ping: ping) }
    }

    /// The connection is lost: what it may not have delivered, as the event reports it (nil when nothing).
    func lost(generation: Int) -> UnconfirmedMessages? {
        self.record.withLock { $0.lost(generation: generation) }.map {
            UnconfirmedMessages(generation: $0.generation, messages: $0.elements, notKept: $0.notKept)
        }
    }

    /// The client is gone (deinitialized): every connection recorded is lost, its answer to the close no longer
    /// heard. `inFlight`, a write that had not completed, is added after what its connection had. In generation order.
    func lostAll(inFlight: (message: WebSocketMessage, generation: Int)?) -> [UnconfirmedMessages] {
        var reports = self.record.withLock { record in
            record.generations.compactMap { record.lost(generation: $0) }
        }.map { UnconfirmedMessages(generation: $0.generation, messages: $0.elements, notKept: $0.notKept) }
        guard let (message, generation) = inFlight else { return reports }
        if let index = reports.firstIndex(where: { $0.generation == generation }) {
            reports[index].messages.append(message)
        } else {
            reports.append(UnconfirmedMessages(generation: generation, messages: [message], notKept: 0))
            reports.sort { $0.generation < $1.generation }
        }
        return reports
    }

    func forget(generation: Int) {
        self.record.withLock { $0.forget(generation: generation) }
    }

    /// Messages kept now, and their payload bytes (for tests of the bound).
    var kept: (count: Int, bytes: Int) { self.record.withLock { ($0.keptCount, $0.keptBytes) } }
}
