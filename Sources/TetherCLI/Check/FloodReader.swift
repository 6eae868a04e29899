#if os(Linux)
import Tether
import TetherCore
import TetherTesting

/// The consumer of a flood: it counts the messages and checks their order as it reads them, keeping none of them (so
/// that the check's own memory does not grow with the flood it measures), and passes every other event on to
/// `events`, which an `EventRecorder` keeps for waits and the report's timeline.
final class FloodReader: Sendable {
    /// What was read.
    struct Tally: Sendable, Equatable {
        var messages = 0
        var bytes = 0
        /// The leading numbers (the test server's stream index) of the first and the last message.
        var first: Int?
        var last: Int?
        /// How many messages, from the first, carried their position in the stream as their index.
        var inOrder = 0

        mutating func add(_ message: WebSocketMessage) {
            let index = CheckScenarios.leadingNumber(of: message)
            if self.inOrder == self.messages, index == self.messages { self.inOrder += 1 }
            if self.messages == 0 { self.first = index }
            self.last = index
            self.messages += 1
            self.bytes += message.byteCount
        }
    }

    /// Every event but the messages, in order.
    let events: AsyncStream<WebSocketEvent>
    private let passedOn: AsyncStream<WebSocketEvent>.Continuation

    init() {
        (self.events, self.passedOn) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
    }

    /// Reads `source` until `count` messages were read. After `limit` the read is cancelled, which ends `source` for
    /// good: a tally short of `count` then says how far it got.
    func readMessages(from source: WebSocketEvents, count: Int, limit: Duration) async -> Tally {
        let passedOn = self.passedOn
        let reading = Task {
            var tally = Tally()
            var events = source.makeAsyncIterator()
            while tally.messages < count, let event = await events.next() {
                guard case .message(let message, _) = event else {
                    passedOn.yield(event)
                    continue
                }
                tally.add(message)
            }
            return tally
        }
        let watchdog = Task {
            try? await Task.sleep(for: limit)  // a guard against a hung read only; the read ends on its own
            reading.cancel()
        }
        let tally = await reading.value
        watchdog.cancel()
        return tally
    }

    /// Passes on what `source` delivers from now on (counting messages no more) until it ends, which it does once the
    /// client is gone.
    func passOnTheRest(of source: WebSocketEvents) {
        let passedOn = self.passedOn
        Task {
            for await event in source {
                guard case .message = event else {
                    passedOn.yield(event)
                    continue
                }
            }
            passedOn.finish()
        }
    }
}
#endif
