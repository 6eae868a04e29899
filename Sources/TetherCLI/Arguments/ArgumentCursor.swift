/// Walks a command line: flags (`--name value` or `--name=value`) and positional arguments.
struct ArgumentCursor {
    private var arguments: [String]
    private var index = 0
    /// The value of the current `--name=value` flag, consumed by the next `value(for:)`.
    private var inlineValue: String?

    init(_ arguments: [String]) {
        self.arguments = arguments
    }

    /// The next argument: a flag (split at `=`) or a positional. Nil at the end.
    mutating func next() -> Argument? {
        self.inlineValue = nil
        guard self.index < self.arguments.count else { return nil }
        let argument = self.arguments[self.index]
        self.index += 1
        if argument.hasPrefix("--"), argument.count > 2 {
            if let equals = argument.firstIndex(of: "=") {
                self.inlineValue = String(argument[argument.index(after: equals)...])
                return .flag(String(argument[..<equals]))
            }
            return .flag(argument)
        }
        if argument == "-h" { return .flag("--help") }
        if argument.hasPrefix("-"), argument.count > 1, Int(argument) == nil {
            return .flag(argument)
        }
        return .positional(argument)
    }

    /// The value of `flag`: its `=value` part or the next argument.
    mutating func value(for flag: String) throws(ArgumentError) -> String {
        if let inline = self.inlineValue {
            self.inlineValue = nil
            return inline
        }
        guard self.index < self.arguments.count else { throw .missingValue(flag: flag) }
        let value = self.arguments[self.index]
        // `--count --quiet` forgot the count; a negative number is a value (and gets a range error).
        if value.hasPrefix("--") { throw .missingValue(flag: flag) }
        self.index += 1
        return value
    }

    /// An integer value of `flag` in `range`; `expected` describes the range for the message.
    mutating func integer(
        for flag: String, in range: ClosedRange<Int>, expected: String
    ) throws(ArgumentError) -> Int {
        let text = try self.value(for: flag)
        guard let number = Int(text), range.contains(number) else {
            throw .invalidNumber(flag: flag, value: text, expected: expected)
        }
        return number
    }

    /// A flag that takes no value must not be written `--flag=value`.
    func noValue(for flag: String) throws(ArgumentError) {
        if let inline = self.inlineValue {
            throw .invalidValue(flag: flag, value: inline, expected: "no value")
        }
    }

    enum Argument: Equatable {
        case flag(String)
        case positional(String)
    }
}

extension ClosedRange where Bound == Int {
    /// Milliseconds as a flag value: 1 ms to 24 h.
    static let milliseconds = 1...86_400_000
    /// A non-negative count of milliseconds: 0 to 24 h.
    static let delayMilliseconds = 0...86_400_000
}
