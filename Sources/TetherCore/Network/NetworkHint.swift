/// What the network path looks like, as a hint for the UI and for retry timing.
///
/// `available` does not mean the server is reachable, and `needsConnection` is not "offline":
/// request outcomes are kept in a separate model and never overwrite the path state.
public enum PathState: Equatable, Hashable, Sendable, CustomStringConvertible {
    /// No update has arrived yet. Never shown as "offline".
    case unknown
    /// A path that satisfies the monitor exists.
    case available
    /// A path could exist once a connection is brought up (for example on-demand VPN).
    case needsConnection
    /// No usable path.
    case unavailable

    /// The case as Swift spells it (`available`, `needsConnection`), as the docs and log records name it.
    public var description: String {
        switch self {
        case .unknown: "unknown"
        case .available: "available"
        case .needsConnection: "needsConnection"
        case .unavailable: "unavailable"
        }
    }
}

/// The path hint, with the monitor generation that keeps a cancelled monitor's late updates out.
///
/// The public API is exactly the original network-hint specification's (docs/ARCHITECTURE.md §6). Call it from one
/// serial domain; restart order: bump the generation with `restart()`, cancel the old monitor, create a new one.
public struct NetworkHint: Sendable {
    public private(set) var generation = 0
    public private(set) var state: PathState = .unknown
    public private(set) var expensive = false
    public private(set) var constrained = false

    public init() {}

    /// Invalidates every update from earlier monitors and returns the generation for the new one.
    public mutating func restart() -> Int {
        self.generation += 1
        self.state = .unknown
        self.expensive = false
        self.constrained = false
        return self.generation
    }

    /// Takes an update from the monitor of generation `incoming`; updates from any other generation change nothing.
    public mutating func accept(
        generation incoming: Int,
        state next: PathState,
        expensive: Bool = false,
        constrained: Bool = false
    ) {
        guard incoming == self.generation else { return }
        self.state = next
        self.expensive = expensive
        self.constrained = constrained
    }
}

extension NetworkHint: Equatable, Hashable {}
