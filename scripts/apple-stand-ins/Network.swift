// Stand-in: the part of Apple's Network framework Tether uses (NWPathMonitorAdapter), in signature only, for
// scripts/apple-typecheck.sh. Declarations only: nothing here runs.
//
// Checked against xybp888/iOS-SDKs iPhoneOS18.0.sdk/System/Library/Frameworks/Network.framework/Modules/
// Network.swiftmodule/arm64-apple-ios.swiftinterface (Swift 6.0, compiled with library evolution, like this stand-in:
// its enums are not frozen, so a switch over them needs `@unknown default`). Availability: NWPath, NWInterface and
// NWPathMonitor since iOS 12 / macOS 10.14 / watchOS 5 / tvOS 12, `isConstrained` since iOS 13; NWPathMonitor is
// Sendable since iOS 17 / macOS 14 / watchOS 10 / tvOS 17 (the package's floor is iOS 18, macOS 15, watchOS 11).
import Dispatch
import Foundation

/// `public struct NWPath : Swift.Equatable, Swift.CustomDebugStringConvertible, Swift.Sendable`
public struct NWPath: Equatable, CustomDebugStringConvertible, Sendable {
    public var debugDescription: String { standIn() }

    /// `public enum Status : Swift.Sendable` (Equatable and Hashable, as an enum without payloads)
    public enum Status: Sendable {
        case satisfied
        case unsatisfied
        case requiresConnection
    }

    /// `public let status: Network.NWPath.Status`
    public let status: NWPath.Status
    /// `public let availableInterfaces: [Network.NWInterface]`
    public let availableInterfaces: [NWInterface]
    /// `public let isExpensive: Swift.Bool`
    public let isExpensive: Bool
    /// `@available(macOS 10.15, iOS 13.0, watchOS 6.0, tvOS 13.0, *) public var isConstrained: Swift.Bool { get }`
    public var isConstrained: Bool { standIn() }
    /// `public func usesInterfaceType(_ type: Network.NWInterface.InterfaceType) -> Swift.Bool`
    public func usesInterfaceType(_ type: NWInterface.InterfaceType) -> Bool { standIn() }

    public static func == (lhs: NWPath, rhs: NWPath) -> Bool { standIn() }
}

/// `public struct NWInterface : Swift.Hashable, Swift.CustomDebugStringConvertible, Swift.Sendable`
public struct NWInterface: Hashable, CustomDebugStringConvertible, Sendable {
    public var debugDescription: String { standIn() }

    /// `public enum InterfaceType : Swift.Sendable`
    public enum InterfaceType: Sendable {
        case other
        case wifi
        case cellular
        case wiredEthernet
        case loopback
    }

    /// `public var type: Network.NWInterface.InterfaceType { get }`
    public var type: NWInterface.InterfaceType { standIn() }
    /// `public var name: Swift.String { get }`
    public var name: String { standIn() }
    /// `public var index: Swift.Int { get }`
    public var index: Int { standIn() }

    public static func == (lhs: NWInterface, rhs: NWInterface) -> Bool { standIn() }
    public func hash(into hasher: inout Hasher) { standIn() }
}

/// `final public class NWPathMonitor`; `extension Network.NWPathMonitor : Swift.Sendable` (iOS 17).
public final class NWPathMonitor: @unchecked Sendable {
    /// `final public var currentPath: Network.NWPath { get }`
    public final var currentPath: NWPath { standIn() }
    /// `@preconcurrency final public var pathUpdateHandler: (@Sendable (_ newPath: Network.NWPath) -> Swift.Void)?`
    @preconcurrency public final var pathUpdateHandler: (@Sendable (_ newPath: NWPath) -> Void)? {
        get { standIn() }
        set { standIn() }
    }
    /// `final public func start(queue: Dispatch.DispatchQueue)`
    public final func start(queue: DispatchQueue) { standIn() }
    /// `final public func cancel()`
    public final func cancel() { standIn() }
    /// `final public var queue: Dispatch.DispatchQueue? { get }`
    public final var queue: DispatchQueue? { standIn() }
    /// `public init()`
    public init() { standIn() }
    /// `public init(requiredInterfaceType: Network.NWInterface.InterfaceType)`
    public init(requiredInterfaceType: NWInterface.InterfaceType) { standIn() }
}

/// Every body of a stand-in: they are declarations for the type-check and never run.
func standIn() -> Never { fatalError("a stand-in of an Apple declaration, for type-checking only") }
