/// A client's connection state as it changes (`WebSocketClient.states`), for any number of observers at once.
///
/// Each iterator starts with the current state, then gets each new one: the states `.stateChanged` reports, in
/// order. An observer that reads slower than states change skips the ones in between but always ends on the latest
/// (each holds at most one unread state, so no observer can grow memory or hold the client back). Messages are not
/// here: they are `events`, one stream with backpressure.
///
/// An iterator ends (`next()` returns nil) when its task is cancelled, and once the client is deinitialized (after
/// the state it had not read yet). An iterator that is dropped (a `for await` left with `break`) stops observing.
public struct WebSocketStates: AsyncSequence, Sendable {
    public typealias Element = ConnectionState
    public typealias Failure = Never

    let broadcast: StateBroadcast

    public func makeAsyncIterator() -> Iterator {
        Iterator(registration: Registration(broadcast: self.broadcast))
    }

    public struct Iterator: AsyncIteratorProtocol {
        public typealias Element = ConnectionState
        public typealias Failure = Never

        let registration: Registration

        /// The latest state not read yet (the current one first), waiting for a change when there is none; nil once
        /// the client is gone or when the calling task is cancelled. Resumes on the caller's isolation.
        public mutating func next(isolation actor: isolated (any Actor)? = #isolation) async -> ConnectionState? {
            await self.registration.broadcast.next(observer: self.registration.id, isolation: actor)
        }

        public mutating func next() async -> ConnectionState? {
            await self.registration.broadcast.next(observer: self.registration.id, isolation: nil)
        }
    }

    /// One iterator's registration with the broadcast, which ends with the iterator.
    final class Registration: Sendable {
        let broadcast: StateBroadcast
        let id: Int

        init(broadcast: StateBroadcast) {
            self.broadcast = broadcast
            self.id = broadcast.addObserver()
        }

        deinit {
            self.broadcast.removeObserver(self.id)
        }
    }
}
