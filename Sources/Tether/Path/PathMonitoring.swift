/// Which path monitor a client runs while it is started.
public enum PathMonitoring: Sendable {
    /// No monitor: the path stays `unknown` (which never blocks) unless fed with `updatePath`.
    case none
    /// The platform's monitor: `NWPathMonitor` on Apple platforms, rtnetlink on Linux.
    case platform
    /// A monitor made by this factory. Monitors are one-shot, so the client asks for a new one per start.
    case custom(@Sendable () -> any PathMonitor)

    /// The default: `.platform` on Apple platforms, where the path is the device's and changes often;
    /// `.none` on Linux, where a service often talks to loopback or local peers that need no default route.
    public static var `default`: PathMonitoring {
        #if canImport(Network)
        .platform
        #else
        .none
        #endif
    }

    /// A new monitor, or nil for `.none` (or when the platform monitor cannot start; the path then stays unknown).
    func makeMonitor() -> (any PathMonitor)? {
        switch self {
        case .none:
            return nil
        case .platform:
            #if canImport(Network)
            return NWPathMonitorAdapter()
            #elseif os(Linux)
            return try? NetlinkPathMonitor()
            #else
            return nil
            #endif
        case .custom(let make):
            return make()
        }
    }
}
