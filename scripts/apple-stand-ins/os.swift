// Stand-in: the part of Apple's `os` module an app's `os.Logger` adapter uses (docs/logging.md), in signature only,
// for scripts/apple-typecheck.sh, which type-checks that example of the page against it. Declarations only: nothing
// here runs, and Tether itself imports no `os`.
//
// Checked against xybp888/iOS-SDKs iPhoneOS18.0.sdk/usr/lib/swift/os.swiftmodule/arm64-apple-ios.swiftinterface
// (Swift 6.0, library evolution): `public struct Logger : @unchecked Swift.Sendable` with `init(subsystem:category:)`,
// `init()` and the level methods `log(_:)`, `trace(_:)`, `debug(_:)`, `info(_:)`, `notice(_:)`, `warning(_:)`,
// `error(_:)`, `critical(_:)`, `fault(_:)`, each taking an `os.OSLogMessage` (`@_transparent` in the SDK, with
// `@_semantics("oslog.requires_constant_arguments")`: the message must be a literal at the call site, which a
// stand-in cannot require); `@frozen public struct OSLogMessage : Swift.ExpressibleByStringInterpolation,
// Swift.ExpressibleByStringLiteral` with `init(stringInterpolation:)`, `init(stringLiteral:)` and `interpolation`;
// `@frozen public struct OSLogInterpolation : Swift.StringInterpolationProtocol` with
// `init(literalCapacity:interpolationCount:)`, `appendLiteral(_:)`, and `appendInterpolation(_:align:privacy:)` for a
// `@autoclosure @escaping () -> Swift.String` and for a `() -> Swift.Int` (with `format:`); `@frozen public struct
// OSLogPrivacy` with `public`, `private`, `sensitive`, `auto`; `@frozen public struct OSLogStringAlignment` with
// `none`; `@frozen public struct OSLogIntegerFormatting` with `decimal`. All `@available(macOS 11.0, iOS 14.0,
// watchOS 7.0, tvOS 14.0, *)`.

/// `public struct Logger : @unchecked Swift.Sendable`
@available(macOS 11.0, iOS 14.0, watchOS 7.0, tvOS 14.0, *)
public struct Logger: @unchecked Sendable {
    public init(subsystem: String, category: String) { standIn() }
    public init() { standIn() }
    public func log(_ message: OSLogMessage) { standIn() }
    public func trace(_ message: OSLogMessage) { standIn() }
    public func debug(_ message: OSLogMessage) { standIn() }
    public func info(_ message: OSLogMessage) { standIn() }
    public func notice(_ message: OSLogMessage) { standIn() }
    public func warning(_ message: OSLogMessage) { standIn() }
    public func error(_ message: OSLogMessage) { standIn() }
    public func critical(_ message: OSLogMessage) { standIn() }
    public func fault(_ message: OSLogMessage) { standIn() }
}

/// `@frozen public struct OSLogMessage : Swift.ExpressibleByStringInterpolation, Swift.ExpressibleByStringLiteral`
@available(macOS 11.0, iOS 14.0, watchOS 7.0, tvOS 14.0, *)
public struct OSLogMessage: ExpressibleByStringInterpolation, ExpressibleByStringLiteral {
    public let interpolation: OSLogInterpolation
    public init(stringInterpolation: OSLogInterpolation) { standIn() }
    public init(stringLiteral value: String) { standIn() }
}

/// `@frozen public struct OSLogInterpolation : Swift.StringInterpolationProtocol`
@available(macOS 11.0, iOS 14.0, watchOS 7.0, tvOS 14.0, *)
public struct OSLogInterpolation: StringInterpolationProtocol {
    public init(literalCapacity: Int, interpolationCount: Int) { standIn() }
    public mutating func appendLiteral(_ literal: String) { standIn() }
    public mutating func appendInterpolation(
        _ argumentString: @autoclosure @escaping () -> String, align: OSLogStringAlignment = .none,
        privacy: OSLogPrivacy = .auto
    ) { standIn() }
    public mutating func appendInterpolation(
        _ number: @autoclosure @escaping () -> Int, format: OSLogIntegerFormatting = .decimal,
        align: OSLogStringAlignment = .none, privacy: OSLogPrivacy = .auto
    ) { standIn() }
}

/// `@frozen public struct OSLogPrivacy`
@available(macOS 11.0, iOS 14.0, watchOS 7.0, tvOS 14.0, *)
public struct OSLogPrivacy {
    public static var `public`: OSLogPrivacy { standIn() }
    public static var `private`: OSLogPrivacy { standIn() }
    public static var sensitive: OSLogPrivacy { standIn() }
    public static var auto: OSLogPrivacy { standIn() }
}

/// `@frozen public struct OSLogStringAlignment`
@available(macOS 11.0, iOS 14.0, watchOS 7.0, tvOS 14.0, *)
public struct OSLogStringAlignment {
    public static var none: OSLogStringAlignment { standIn() }
}

/// `@frozen public struct OSLogIntegerFormatting`
@available(macOS 11.0, iOS 14.0, watchOS 7.0, tvOS 14.0, *)
public struct OSLogIntegerFormatting {
    public static var decimal: OSLogIntegerFormatting { standIn() }
}

func standIn() -> Never { fatalError("a stand-in of an Apple declaration, for type-checking only") }
