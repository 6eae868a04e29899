import Synchronization
import Tether
import TetherCore

/// Collects one client's events for a check scenario and lets the scenario wait for a condition on them.
///
/// Waiting is on explicit signals: every event re-checks the waiters; nothing polls. The timeout of a wait
/// only turns a missing event into a failed scenario instead of a hung check.
final class ClientRecorder: Sendable {
    /// What the client reported so far.
    struct Snapshot: Sendable {
        var records: [LogRecord] = []
        /// Data messages received.
        var messages = 0
        /// Messages whose payload named their own index (`TestServer`'s stream: `"<i>."...`) in order.
        var messagesInOrder = 0
        var finished = false
    }

    private struct Waiter {
        var id: Int
        var condition: @Sendable (Snapshot) -> Bool
        var continuation: CheckedContinuation<Snapshot?, Never>
    }

    private struct State {
        var snapshot = Snapshot()
        var waiters: [Waiter] = []
        var nextID = 0
    }

    private final class Storage: Sendable {
        let state = Mutex(State())
    }

    private let storage = Storage()
    private let reader: Task<Void, Never>

    init(_ events: AsyncStream<WebSocketEvent>) {
        let storage = self.storage
        self.reader = Task {
            for await event in events {
                let ready = storage.state.withLock { state -> [(Waiter, Snapshot)] in
                    Self.apply(event, to: &state.snapshot)
                    return Self.takeSatisfied(&state)
                }
                for (waiter, snapshot) in ready { waiter.continuation.resume(returning: snapshot) }
            }
            let pending = storage.state.withLock { state -> [Waiter] in
                state.snapshot.finished = true
                defer { state.waiters.removeAll() }
                return state.waiters
            }
            for waiter in pending { waiter.continuation.resume(returning: nil) }
        }
    }

    deinit {
        self.reader.cancel()
    }

    var snapshot: Snapshot { self.storage.state.withLock { $0.snapshot } }

    /// Waits until `condition` holds for what was recorded.
    /// - Throws: `CheckFailure.timedOut(what)` after `timeout`, or when the client's event stream ended first.
    @discardableResult
    func wait(
        _ what: String, timeout: Duration, until condition: @escaping @Sendable (Snapshot) -> Bool
    ) async throws(CheckFailure) -> Snapshot {
        let id = self.storage.state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        let guardTask = Task { [storage] in
            try? await Task.sleep(for: timeout)
            let expired = storage.state.withLock { state -> Waiter? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index)
            }
            expired?.continuation.resume(returning: nil)
        }
        defer { guardTask.cancel() }
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Snapshot?, Never>) in
            let immediate = self.storage.state.withLock { state -> Snapshot?? in
                if condition(state.snapshot) { return .some(state.snapshot) }
                if state.snapshot.finished { return .some(nil) }
                state.waiters.append(Waiter(id: id, condition: condition, continuation: continuation))
                return nil
            }
            if let immediate { continuation.resume(returning: immediate) }
        }
        guard let result else { throw .timedOut(what) }
        return result
    }

    private static func apply(_ event: WebSocketEvent, to snapshot: inout Snapshot) {
        switch event {
        case .record(let record):
            snapshot.records.append(record)
        case .message(let message):
            if Self.index(of: message) == snapshot.messages, snapshot.messagesInOrder == snapshot.messages {
                snapshot.messagesInOrder += 1
            }
            snapshot.messages += 1
        case .stateChanged, .roundTrip:
            break
        }
    }

    /// The leading decimal number of a stream message (`"17....."`), or nil.
    static func index(of message: WebSocketMessage) -> Int? {
        let bytes: [UInt8] =
            switch message {
            case .text(let text): Array(text.utf8.prefix(20))
            case .binary(let data): Array(data.prefix(20))
            }
        var value = 0
        var digits = 0
        for byte in bytes {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { break }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
            digits += 1
        }
        return digits > 0 ? value : nil
    }

    private static func takeSatisfied(_ state: inout State) -> [(Waiter, Snapshot)] {
        var ready: [(Waiter, Snapshot)] = []
        state.waiters.removeAll { waiter in
            guard waiter.condition(state.snapshot) else { return false }
            ready.append((waiter, state.snapshot))
            return true
        }
        return ready
    }
}

/// Why a scenario could not finish its steps.
enum CheckFailure: Error, Equatable, CustomStringConvertible {
    /// A wait's condition never held.
    case timedOut(String)
    /// The embedded server could not start, or another setup step failed.
    case setup(String)

    var description: String {
        switch self {
        case .timedOut(let what): "timed out waiting for \(what)"
        case .setup(let what): "setup failed: \(what)"
        }
    }
}

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
