#if os(Linux)
import Synchronization

/// When each TCP connect of a race started and ended, and how, on the loop's clock: filled by the race as it runs
/// (on the loop thread), read from any thread (a snapshot may be taken while attempts are in flight).
package final class ConnectTimeline: Sendable {
    /// One connect of the race.
    package struct Entry: Sendable {
        package var address: SocketAddress
        package var started: ContinuousClock.Instant
        /// When it ended; nil while in flight.
        package var ended: ContinuousClock.Instant?
        /// How it failed; nil when it connected (or is still in flight).
        package var error: SocketError?
    }

    private let entries = Mutex<[Int: Entry]>([:])

    package init() {}

    /// The connects so far, in the order they started.
    package var attempts: [Entry] {
        self.entries.withLock { entries in entries.sorted { $0.key < $1.key }.map(\.value) }
    }

    func started(_ index: Int, address: SocketAddress, at instant: ContinuousClock.Instant) {
        self.entries.withLock { $0[index] = Entry(address: address, started: instant) }
    }

    /// Attempt `index` ended at `instant`: connected when `error` is nil. The first end stands.
    func ended(_ index: Int, error: SocketError?, at instant: ContinuousClock.Instant) {
        self.entries.withLock { entries in
            guard entries[index]?.ended == nil else { return }
            entries[index]?.ended = instant
            entries[index]?.error = error
        }
    }
}
#endif
