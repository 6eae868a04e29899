/// One element of a `Sec-WebSocket-Extensions` list (RFC 6455 §9.1): an extension name and its parameters, in
/// order, each with an optional value (a token, or a quoted string with its escapes removed).
///
/// `permessage-deflate; client_max_window_bits; server_max_window_bits="10"` is the name `permessage-deflate` and
/// the parameters `client_max_window_bits` (no value) and `server_max_window_bits` (`10`). Names are lowercased
/// (extension and parameter names are case-insensitive tokens).
package struct ExtensionElement: Equatable, Sendable {
    package var name: String
    package var parameters: [(name: String, value: String?)]

    package init(name: String, parameters: [(name: String, value: String?)] = []) {
        self.name = name
        self.parameters = parameters
    }

    package static func == (lhs: ExtensionElement, rhs: ExtensionElement) -> Bool {
        lhs.name == rhs.name && lhs.parameters.count == rhs.parameters.count
            && zip(lhs.parameters, rhs.parameters).allSatisfy { $0.name == $1.name && $0.value == $1.value }
    }

    /// Why an element could not be read. The texts are fixed: a header value is never echoed.
    package enum SyntaxError: Error, Equatable, Sendable {
        case emptyName
        case invalidName
        case invalidParameter
        case unterminatedQuote
    }

    /// Parses one element (a list element as `HTTPSyntax.splitList` returns it).
    package init(parsing element: String) throws(SyntaxError) {
        let (pieces, unterminatedQuote) = HTTPSyntax.split(element, on: UInt8(ascii: ";"))
        guard !unterminatedQuote else { throw .unterminatedQuote }

        let name = HTTPSyntax.trimmed(pieces[0])
        guard !name.isEmpty else { throw .emptyName }
        guard HTTPSyntax.isToken(name) else { throw .invalidName }
        self.name = Self.lowercased(name)
        self.parameters = []
        for piece in pieces.dropFirst() {
            self.parameters.append(try Self.parameter(HTTPSyntax.trimmed(piece)))
        }
    }

    /// The elements of a `Sec-WebSocket-Extensions` value (a comma-separated list), those that parse, in order.
    package static func list(_ headerValue: String) -> [ExtensionElement] {
        HTTPSyntax.splitList(headerValue).compactMap { try? ExtensionElement(parsing: $0) }
    }

    /// The element as sent: `name; param; param=value` (a value that is not a token is quoted).
    package var headerText: String {
        var text = self.name
        for parameter in self.parameters {
            text += "; " + parameter.name
            if let value = parameter.value {
                text += "=" + (HTTPSyntax.isToken(value) ? value : Self.quoted(value))
            }
        }
        return text
    }

    /// The values given for `name` (nil for a parameter without a value), in order.
    package func values(of name: String) -> [String?] {
        self.parameters.filter { $0.name == name }.map(\.value)
    }

    private static func parameter(_ text: String) throws(SyntaxError) -> (name: String, value: String?) {
        let bytes = Array(text.utf8)
        guard let equals = bytes.firstIndex(of: UInt8(ascii: "=")) else {
            guard HTTPSyntax.isToken(text) else { throw .invalidParameter }
            return (lowercased(text), nil)
        }
        let name = HTTPSyntax.trimmed(Array(bytes[..<equals]))
        let rawValue = Array(HTTPSyntax.trimmed(Array(bytes[(equals + 1)...])).utf8)
        guard HTTPSyntax.isToken(name) else { throw .invalidParameter }
        if rawValue.first == UInt8(ascii: "\"") {
            guard rawValue.count >= 2, rawValue.last == UInt8(ascii: "\"") else { throw .invalidParameter }
            var value: [UInt8] = []
            var escaped = false
            for byte in rawValue.dropFirst().dropLast() {
                if escaped {
                    value.append(byte)
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    throw .invalidParameter
                } else {
                    value.append(byte)
                }
            }
            guard !escaped else { throw .invalidParameter }
            return (lowercased(name), String(decoding: value, as: UTF8.self))
        }
        let value = String(decoding: rawValue, as: UTF8.self)
        guard HTTPSyntax.isToken(value) else { throw .invalidParameter }
        return (lowercased(name), value)
    }

    private static func lowercased(_ text: String) -> String {
        String(decoding: text.utf8.map(HTTPSyntax.lowercased), as: UTF8.self)
    }

    private static func quoted(_ value: String) -> String {
        var bytes: [UInt8] = [UInt8(ascii: "\"")]
        for byte in value.utf8 {
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { bytes.append(UInt8(ascii: "\\")) }
            bytes.append(byte)
        }
        bytes.append(UInt8(ascii: "\""))
        return String(decoding: bytes, as: UTF8.self)
    }
}
