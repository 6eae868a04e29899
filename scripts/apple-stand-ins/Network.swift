// A stand-in for Apple's Network framework: exactly the API Sources/Tether/Path/NWPathMonitorAdapter.swift uses,
// declared as Apple's documentation gives it, so that scripts/apple-typecheck.sh can type-check that file on Linux.
// Nothing here runs. Sources: developer.apple.com/documentation/network/...
import Dispatch

/// `struct NWPath` (documentation/network/nwpath): Sendable, Equatable.
public struct NWPath: Sendable, Equatable {
    /// `enum NWPath.Status` (documentation/network/nwpath/status-swift.enum): satisfied, unsatisfied,
    /// requiresConnection; not frozen (hence `@unknown default` in the adapter).
    public enum Status: Sendable, Equatable, Hashable {
        case satisfied
        case unsatisfied
        case requiresConnection
    }

    /// `var status: NWPath.Status { get }`
    public var status: NWPath.Status { .unsatisfied }
    /// `var availableInterfaces: [NWInterface] { get }`
    public var availableInterfaces: [NWInterface] { [] }
    /// `var isExpensive: Bool { get }`
    public var isExpensive: Bool { false }
    /// `var isConstrained: Bool { get }` (iOS 13+)
    public var isConstrained: Bool { false }
}

/// `struct NWInterface` (documentation/network/nwinterface): Sendable, Hashable.
public struct NWInterface: Sendable, Hashable {
    /// `enum NWInterface.InterfaceType`: other, wifi, cellular, wiredEthernet, loopback; not frozen.
    public enum InterfaceType: Sendable, Hashable {
        case other
        case wifi
        case cellular
        case wiredEthernet
        case loopback
    }

    /// `let type: NWInterface.InterfaceType`
    public let type: NWInterface.InterfaceType
    /// `let name: String`
    public let name: String
}

/// `final class NWPathMonitor` (documentation/network/nwpathmonitor), Sendable.
public final class NWPathMonitor: @unchecked Sendable {
    /// `init()`
    public init() {}
    /// `@preconcurrency final var pathUpdateHandler: (@Sendable (NWPath) -> Void)? { get set }`
    /// (documentation/network/nwpathmonitor/pathupdatehandler)
    public final var pathUpdateHandler: (@Sendable (NWPath) -> Void)?
    /// `final func start(queue: DispatchQueue)`
    public final func start(queue: DispatchQueue) {}
    /// `final func cancel()`
    public final func cancel() {}
}
