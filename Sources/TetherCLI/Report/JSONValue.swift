/// A JSON value whose objects keep their keys in the order they were built, so that every line and report
/// Tether writes has a stable, documented key order (`t`, `gen`, `event`, ...).
package enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    case int(Int)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    package static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.bool(let a), .bool(let b)): a == b
        case (.int(let a), .int(let b)): a == b
        case (.string(let a), .string(let b)): a == b
        case (.array(let a), .array(let b)): a == b
        case (.object(let a), .object(let b)):
            a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: false
        }
    }

    /// Compact JSON on one line (JSON Lines), or indented with two spaces when `pretty`.
    package func serialized(pretty: Bool = false) -> String {
        var output = ""
        self.write(into: &output, pretty: pretty, indent: 0)
        return output
    }

    private func write(into output: inout String, pretty: Bool, indent: Int) {
        switch self {
        case .null:
            output += "null"
        case .bool(let value):
            output += value ? "true" : "false"
        case .int(let value):
            output += String(value)
        case .string(let value):
            Self.writeString(value, into: &output)
        case .array(let values):
            guard !values.isEmpty else {
                output += "[]"
                return
            }
            output += "["
            for (index, value) in values.enumerated() {
                if index > 0 { output += "," }
                if pretty { Self.newline(into: &output, indent: indent + 1) }
                value.write(into: &output, pretty: pretty, indent: indent + 1)
            }
            if pretty { Self.newline(into: &output, indent: indent) }
            output += "]"
        case .object(let members):
            guard !members.isEmpty else {
                output += "{}"
                return
            }
            output += "{"
            for (index, (key, value)) in members.enumerated() {
                if index > 0 { output += "," }
                if pretty { Self.newline(into: &output, indent: indent + 1) }
                Self.writeString(key, into: &output)
                output += pretty ? ": " : ":"
                value.write(into: &output, pretty: pretty, indent: indent + 1)
            }
            if pretty { Self.newline(into: &output, indent: indent) }
            output += "}"
        }
    }

    private static func newline(into output: inout String, indent: Int) {
        output += "\n"
        output += String(repeating: "  ", count: indent)
    }

    private static func writeString(_ value: String, into output: inout String) {
        output += "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default:
                output.unicodeScalars.append(scalar)
            }
        }
        output += "\""
    }
}
