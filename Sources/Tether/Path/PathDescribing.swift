/// What a platform path object tells about the network path; `NWPath` conforms on Apple platforms.
///
/// The platform shell only names the platform's cases; the mapping to a `PathSnapshot` lives here, in code
/// that is compiled and tested on every platform.
public protocol PathDescribing {
    /// The status, or `nil` when the platform reported a value this version of Tether does not know
    /// (a future `NWPath.Status` case).
    var knownStatus: PathStatus? { get }
    var isExpensive: Bool { get }
    var isConstrained: Bool { get }
    /// The kinds of the path's interfaces, most preferred first (unknown future kinds as `.other`).
    var interfaceKinds: [InterfaceKind] { get }
    /// The names of the path's interfaces, in the order of `interfaceKinds` (`NWInterface.name`: `en0`, `pdp_ip0`).
    var interfaceNames: [String] { get }
}

extension PathSnapshot {
    /// The snapshot for a platform path. An unknown status maps to `.unknown` (the hint shows "unknown",
    /// never "offline"); its cost flags and interfaces are kept as reported.
    public init(describing path: some PathDescribing) {
        self.init(
            status: path.knownStatus ?? .unknown,
            isExpensive: path.isExpensive,
            isConstrained: path.isConstrained,
            interfaces: path.interfaceKinds,
            interfaceNames: path.interfaceNames
        )
    }
}
