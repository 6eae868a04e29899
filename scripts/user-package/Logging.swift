// Stand-in: the part of swift-log's `Logger` (module `Logging`) that docs/logging.md's adapter uses, in signature
// only, so that scripts/user-package.sh compiles that example without the package (the machine cannot fetch it).
// Declarations as apple/swift-log declares them in Sources/Logging/Logger.swift at commit 7af2de1 (after 1.14.0):
// `public struct Logger` (Sendable), `init(label:)`, `label`, `log(level:_:error:metadata:source:file:function:line:)`
// with its autoclosures and defaults, the level methods `info(_:metadata:source:file:function:line:)` and kin,
// `Logger.Level` (`enum Level: String, Codable, CaseIterable`, Sendable, Comparable), `Logger.Metadata`
// (`[String: MetadataValue]`), `Logger.MetadataValue` (`string`, `stringConvertible(any CustomStringConvertible &
// Sendable)`, `dictionary`, `array`; Sendable) and `Logger.Message` (`ExpressibleByStringLiteral, Equatable,
// CustomStringConvertible, ExpressibleByStringInterpolation`, Sendable). Nothing here logs.

public struct Logger: Sendable {
    public let label: String

    public init(label: String) {
        self.label = label
    }

    public func log(
        level: Logger.Level,
        _ message: @autoclosure () -> Logger.Message,
        error: @autoclosure () -> (any Error)? = nil,
        metadata: @autoclosure () -> Logger.Metadata? = nil,
        source: @autoclosure () -> String? = nil,
        file: String = #fileID,
        function: String = #function,
        line: UInt = #line
    ) {}

    public func info(
        _ message: @autoclosure () -> Logger.Message,
        metadata: @autoclosure () -> Logger.Metadata? = nil,
        source: @autoclosure () -> String? = nil,
        file: String = #fileID,
        function: String = #function,
        line: UInt = #line
    ) {}
}

extension Logger {
    public typealias Metadata = [String: MetadataValue]

    public enum MetadataValue: Sendable {
        case string(String)
        case stringConvertible(any CustomStringConvertible & Sendable)
        case dictionary(Metadata)
        case array([Metadata.Value])
    }

    public enum Level: String, Codable, CaseIterable, Sendable {
        case trace
        case debug
        case info
        case notice
        case warning
        case error
        case critical
    }

    public struct Message: ExpressibleByStringLiteral, Equatable, CustomStringConvertible,
        ExpressibleByStringInterpolation, Sendable
    {
        public typealias StringLiteralType = String

        private var value: String

        public init(stringLiteral value: String) {
            self.value = value
        }

        public var description: String {
            self.value
        }
    }
}

extension Logger.Level: Comparable {
    public static func < (lhs: Logger.Level, rhs: Logger.Level) -> Bool {
        Self.allCases.firstIndex(of: lhs)! < Self.allCases.firstIndex(of: rhs)!
    }
}
