/// Why a command line was refused. Every case has a message for stderr; the command then exits with 2.
package enum ArgumentError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No command was given.
    case missingCommand
    /// The first argument is not `check`, `connect` or `serve`.
    case unknownCommand(String)
    /// A flag the command does not know.
    case unknownFlag(String, command: String)
    /// A flag that needs a value came last.
    case missingValue(flag: String)
    /// A value that is not an integer in the allowed range.
    case invalidNumber(flag: String, value: String, expected: String)
    /// A required positional argument (the URL of `connect`) is missing.
    case missingArgument(String)
    /// A positional argument the command does not take.
    case unexpectedArgument(String)
    /// The URL does not parse or has no host.
    case invalidURL(String)
    /// The URL names a port outside 1...65535.
    case invalidPort(String, port: Int)
    /// The URL's scheme is not `ws` or `wss`.
    case unsupportedScheme(String)
    /// A `--header` value that is not `Name:Value` with a valid header name.
    case invalidHeader(String)
    /// A value that is not allowed for the flag (for example `--events xml`).
    case invalidValue(flag: String, value: String, expected: String)
    /// A flag that only makes sense together with another one.
    case requires(flag: String, other: String)
    /// Two flags that contradict each other.
    case conflicting(String, String)
    /// `--only` names no scenario of `tether check`.
    case unknownScenario(String, known: [String])

    package var description: String {
        switch self {
        case .missingCommand:
            "missing command: expected check, connect or serve"
        case .unknownCommand(let command):
            "unknown command '\(command)': expected check, connect or serve"
        case .unknownFlag(let flag, let command):
            "unknown option '\(flag)' for 'tether \(command)'"
        case .missingValue(let flag):
            "option '\(flag)' needs a value"
        case .invalidNumber(let flag, let value, let expected):
            "option '\(flag)' needs \(expected), got '\(value)'"
        case .missingArgument(let name):
            "missing argument: \(name)"
        case .unexpectedArgument(let argument):
            "unexpected argument '\(argument)'"
        case .invalidURL(let url):
            "invalid URL '\(url)': expected ws://HOST[:PORT]/PATH or wss://..."
        case .invalidPort(let url, let port):
            "invalid URL '\(url)': port \(port) is not in 1...65535"
        case .unsupportedScheme(let scheme):
            "unsupported URL scheme '\(scheme)': expected ws or wss"
        case .invalidHeader(let header):
            "invalid header '\(header)': expected Name:Value with a token name"
        case .invalidValue(let flag, let value, let expected):
            "option '\(flag)' needs \(expected), got '\(value)'"
        case .requires(let flag, let other):
            "option '\(flag)' needs '\(other)' too"
        case .conflicting(let first, let second):
            "options '\(first)' and '\(second)' cannot be used together"
        case .unknownScenario(let name, let known):
            "unknown scenario '\(name)'; scenarios: \(known.joined(separator: ", "))"
        }
    }
}
