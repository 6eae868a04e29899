#if os(Linux)
import Synchronization

/// Holds the client contexts one owner's connections used (a transport, for the clients it serves), so that their
/// sessions outlive each connection: a client that reconnects offers the session its last connection was issued,
/// even while no connection is open. The `capacity` most recently used option sets are kept.
package final class TLSContextKeeper: Sendable {
    private let held: Mutex<[(options: TLSClientOptions, context: TLSContext)]>
    private let capacity: Int

    package init(capacity: Int = 8) {
        precondition(capacity > 0, "a keeper keeps at least one context")
        self.held = Mutex([])
        self.capacity = capacity
    }

    /// The context for `options`: the one kept, or the process's shared one (made if none), kept from now on as
    /// the most recently used.
    package func context(for options: TLSClientOptions) throws(TLSConfigurationError) -> TLSContext {
        if let kept = self.held.withLock({ held -> TLSContext? in
            guard let index = held.firstIndex(where: { $0.options == options }) else { return nil }
            let entry = held.remove(at: index)
            held.append(entry)
            return entry.context
        }) {
            return kept
        }
        let context = try TLSContext.sharedClient(options)
        self.keep(context, for: options)
        return context
    }

    /// Keeps `context` as `options`' and the most recently used; beyond `capacity`, the least recently used goes.
    func keep(_ context: TLSContext, for options: TLSClientOptions) {
        self.held.withLock { held in
            if let index = held.firstIndex(where: { $0.options == options }) {
                held.remove(at: index)
            }
            held.append((options, context))
            if held.count > self.capacity { held.removeFirst(held.count - self.capacity) }
        }
    }

    /// How many contexts are kept.
    package var count: Int { self.held.withLock { $0.count } }
}
#endif
