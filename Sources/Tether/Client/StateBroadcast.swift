import Synchronization

/// A client's latest state and the observers of `WebSocketClient.states`. Each observer holds at most one state it
/// has not read yet, the latest: a slow observer skips the states in between and always ends on the newest, and no
/// observer can grow memory. The client publishes on its executor; observers read on theirs.
final class StateBroadcast: Sendable {
    private typealias Waiter = UnsafeContinuation<ConnectionState?, Never>

    private struct Observer {
        /// The latest state this observer has not read yet.
        var unread: ConnectionState?
        /// The observer, waiting for a state because it had read the latest.
        var waiter: Waiter?
    }

    private struct State {
        var latest: ConnectionState
        var observers: [Int: Observer] = [:]
        var lastObserver = 0
        /// The client is gone: observers read what they have not read yet, then the end.
        var finished = false
    }

    private let state: Mutex<State>

    init(_ initial: ConnectionState) {
        self.state = Mutex(State(latest: initial))
    }

    /// The state last published (the initial one before any).
    var latest: ConnectionState { self.state.withLock { $0.latest } }

    /// How many observers are registered (tests check that they leave).
    var observerCount: Int { self.state.withLock { $0.observers.count } }

    /// Makes `state` the latest: a waiting observer gets it at once, the others find it when they ask.
    func publish(_ state: ConnectionState) {
        let waiting: [Waiter] = self.state.withLock { broadcast in
            guard !broadcast.finished else { return [] }
            broadcast.latest = state
            var waiting: [Waiter] = []
            for (id, var observer) in broadcast.observers {
                if let waiter = observer.waiter {
                    waiting.append(waiter)
                    observer.waiter = nil
                } else {
                    observer.unread = state
                }
                broadcast.observers[id] = observer
            }
            return waiting
        }
        for waiter in waiting {
            waiter.resume(returning: state)
        }
    }

    /// The client is gone: every observer reads what it has not read yet, then nil.
    func finish() {
        let waiting: [Waiter] = self.state.withLock { broadcast in
            broadcast.finished = true
            var waiting: [Waiter] = []
            for (id, var observer) in broadcast.observers {
                if let waiter = observer.waiter { waiting.append(waiter) }
                observer.waiter = nil
                broadcast.observers[id] = observer
            }
            return waiting
        }
        for waiter in waiting {
            waiter.resume(returning: nil)
        }
    }

    /// A new observer, whose first read is the latest state. Returns its number.
    func addObserver() -> Int {
        self.state.withLock { broadcast in
            broadcast.lastObserver += 1
            broadcast.observers[broadcast.lastObserver] = Observer(unread: broadcast.latest)
            return broadcast.lastObserver
        }
    }

    /// Observer `id` left (its iterator is gone). A waiting read, if any, gets the end.
    func removeObserver(_ id: Int) {
        let waiter = self.state.withLock { $0.observers.removeValue(forKey: id)?.waiter }
        waiter?.resume(returning: nil)
    }

    /// The state observer `id` has not read yet, waiting for the next one when it has read the latest; nil once the
    /// client is gone (after what was unread), or when the calling task is cancelled.
    func next(observer id: Int, isolation actor: isolated (any Actor)?) async -> ConnectionState? {
        guard !Task.isCancelled else { return nil }
        return await withTaskCancellationHandler {
            await withUnsafeContinuation(isolation: actor) { (continuation: Waiter) in
                let ready: ConnectionState?? = self.state.withLock { broadcast in
                    guard var observer = broadcast.observers[id] else { return .some(nil) }
                    defer { broadcast.observers[id] = observer }
                    if let unread = observer.unread {
                        observer.unread = nil
                        return .some(unread)
                    }
                    // The cancellation flag is set before the handler runs, and the handler takes this lock.
                    if broadcast.finished || Task.isCancelled { return .some(nil) }
                    observer.waiter = continuation
                    return .none
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            let waiter: Waiter? = self.state.withLock { broadcast in
                guard var observer = broadcast.observers[id], let waiter = observer.waiter else { return nil }
                observer.waiter = nil
                broadcast.observers[id] = observer
                return waiter
            }
            waiter?.resume(returning: nil)
        }
    }
}
