import Tether

/// A monitor that delivers the snapshots it is told to, for tests and for `tether check`.
///
/// It follows the `PathMonitor` rules: the current snapshot on start, repeats filtered (unless
/// `filtersRepeats` is `false`), nothing after `cancel()`, no restart. Deliveries run on the caller's thread,
/// inside `start` and `deliver`.
public final class ScriptedPathMonitor: PathMonitor {
    private let delivery: PathSnapshotDelivery

    /// - Parameters:
    ///   - current: the path delivered on start; `nil` delivers nothing until the first `deliver(_:)`, like a
    ///     platform monitor that has not answered yet.
    ///   - filtersRepeats: defaults to `true`, like the real monitors; `false` delivers every `deliver(_:)`,
    ///     to test that a consumer copes with a platform that repeats itself.
    public init(current: PathSnapshot? = nil, filtersRepeats: Bool = true) {
        self.delivery = PathSnapshotDelivery(filtersRepeats: filtersRepeats)
        if let current {
            self.delivery.update(current)
        }
    }

    public func start(_ handler: @escaping @Sendable (PathSnapshot) -> Void) {
        self.delivery.start(handler)
    }

    public func cancel() {
        self.delivery.cancel()
    }

    /// Makes `snapshot` the current path and delivers it when the monitor is running (and, when repeats are
    /// filtered, when it differs from the last delivery). Before start it is only remembered; after cancel it
    /// is ignored.
    public func deliver(_ snapshot: PathSnapshot) {
        self.delivery.update(snapshot)
    }

    /// `true` once `start` was called (even if cancelled since).
    public var isStarted: Bool { self.delivery.isStarted }

    public var isCancelled: Bool { self.delivery.isCancelled }
}
