import TetherCore

/// The status of a network path, as the platform monitor reports it.
public enum PathStatus: Equatable, Hashable, Sendable {
    /// A path that satisfies the monitor exists. It does not mean that the server is reachable.
    case satisfied
    /// No usable path exists.
    case unsatisfied
    /// A path could exist once a connection is brought up (for example an on-demand VPN). Not "offline".
    case requiresConnection
    /// The platform reported a status this version of Tether does not know (a future `NWPath.Status` value).
    /// Never produced on Linux.
    case unknown
}

/// The kind of an interface that carries the path.
public enum InterfaceKind: Equatable, Hashable, Sendable {
    case wifi
    case cellular
    case wiredEthernet
    case loopback
    case other
}

/// One observation of the network path. Two snapshots that compare equal look the same to the client,
/// so monitors deliver a snapshot only when it differs from the previous one.
public struct PathSnapshot: Equatable, Hashable, Sendable {
    public var status: PathStatus
    /// The path goes through an interface that costs money (cellular, personal hotspot).
    public var isExpensive: Bool
    /// The user asked to save data on this path (Low Data Mode).
    public var isConstrained: Bool
    /// The kinds of the interfaces that carry the path, most preferred first.
    public var interfaces: [InterfaceKind]
    /// The names of the interfaces that carry the path (`en0`, `eth1`), in the order of `interfaces`; empty when
    /// the monitor does not name them. Kinds alone cannot tell two interfaces of the same kind apart: a move from
    /// `eth0` to `eth1` changes only the names, and it is still a new path (the client probes its connection).
    public var interfaceNames: [String]

    /// - Parameters:
    ///   - isExpensive: defaults to `false`, the common case.
    ///   - isConstrained: defaults to `false`, the common case.
    ///   - interfaces: defaults to none, as for a path that is not satisfied.
    ///   - interfaceNames: defaults to none, for a monitor that does not name interfaces.
    public init(
        status: PathStatus,
        isExpensive: Bool = false,
        isConstrained: Bool = false,
        interfaces: [InterfaceKind] = [],
        interfaceNames: [String] = []
    ) {
        self.status = status
        self.isExpensive = isExpensive
        self.isConstrained = isConstrained
        self.interfaces = interfaces
        self.interfaceNames = interfaceNames
    }

    /// Whether `other` goes through different interfaces than this snapshot: other kinds, or (when both name
    /// them) other names. Cost flags and status do not count.
    public func changesInterfaces(from other: PathSnapshot) -> Bool {
        self.interfaces != other.interfaces || self.interfaceNames != other.interfaceNames
    }

    /// The state the network hint shows for this snapshot (`NetworkHint.accept(generation:state:...)`).
    public var pathState: PathState {
        switch self.status {
        case .satisfied: .available
        case .unsatisfied: .unavailable
        case .requiresConnection: .needsConnection
        case .unknown: .unknown
        }
    }
}
