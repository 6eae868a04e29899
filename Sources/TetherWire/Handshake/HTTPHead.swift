/// Internal helpers shared by the handshake parsers: finding the end of an HTTP/1.1 message head in a growing
/// buffer, splitting it into a start line and header fields, and token rules (RFC 9110, RFC 9112).
struct HTTPHeadBuffer: Sendable {
    let limit: Int
    private(set) var bytes: [UInt8] = []
    /// Where the search for the blank line resumes (everything before it holds no terminator).
    private var scanIndex = 0
    /// The index just past the blank line that ends the head, once found.
    private(set) var headEnd: Int?

    init(limit: Int) {
        precondition(limit > 0, "maximumHeaderSize must be positive")
        self.limit = limit
    }

    mutating func append(_ bytes: some Sequence<UInt8>) {
        self.bytes.append(contentsOf: bytes)
    }

    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        bytes.withMemoryRebound(to: UInt8.self) { self.bytes.append(contentsOf: $0) }
    }

    /// Finds the end of the head (a blank line: CRLF CRLF, or bare LFs, which RFC 9112 §2.2 lets a recipient
    /// accept). Returns nil when more bytes are needed; throws once `limit` bytes hold no complete head.
    mutating func findHeadEnd() throws(HandshakeError) -> Int? {
        if let end = self.headEnd { return end }
        let searchEnd = min(self.bytes.count, self.limit)
        var index = self.scanIndex
        while index < searchEnd {
            if self.bytes[index] == 0x0A {
                if index + 1 < searchEnd, self.bytes[index + 1] == 0x0A {
                    self.headEnd = index + 2
                    return index + 2
                }
                if index + 2 < searchEnd, self.bytes[index + 1] == 0x0D, self.bytes[index + 2] == 0x0A {
                    self.headEnd = index + 3
                    return index + 3
                }
                // Not enough bytes after this LF to decide: resume here next time.
                if index + 2 >= searchEnd { break }
            }
            index += 1
        }
        self.scanIndex = index
        if self.bytes.count >= self.limit { throw HandshakeError.headerTooLarge(limit: self.limit) }
        return nil
    }

    /// The bytes after the head.
    var remaining: [UInt8] {
        guard let end = self.headEnd else { return [] }
        return Array(self.bytes[end...])
    }
}

/// The part both handshake parsers share: bytes in, a head once it is complete, and a failure that sticks
/// (every call after the first error throws it again).
struct HandshakeParsing: Sendable {
    private(set) var buffer: HTTPHeadBuffer
    private var failure: HandshakeError?

    init(limit: Int) {
        self.buffer = HTTPHeadBuffer(limit: limit)
    }

    mutating func append(_ bytes: some Sequence<UInt8>) {
        self.buffer.append(bytes)
    }

    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        self.buffer.append(bytes)
    }

    /// The complete head validated by `validate` (given the bytes after the head), nil when more bytes are
    /// needed; a thrown error is remembered and thrown again by every later call.
    mutating func parse<Value>(
        _ validate: (HTTPHead, _ remaining: [UInt8]) throws(HandshakeError) -> Value
    ) throws(HandshakeError) -> Value? {
        if let failure = self.failure { throw failure }
        do throws(HandshakeError) {
            guard let end = try self.buffer.findHeadEnd() else { return nil }
            return try validate(HTTPHead(self.buffer.bytes[..<end]), self.buffer.remaining)
        } catch {
            self.failure = error
            throw error
        }
    }
}

/// A parsed message head.
struct HTTPHead {
    var startLine: [UInt8]
    var headers: [HTTPHeader]

    /// Splits `head` (ending with the blank line) into the start line and header fields.
    init(_ head: ArraySlice<UInt8>) throws(HandshakeError) {
        var lines: [ArraySlice<UInt8>] = []
        var lineStart = head.startIndex
        for index in head.indices where head[index] == 0x0A {
            var line = head[lineStart..<index]
            if line.last == 0x0D { line = line.dropLast() }
            lines.append(line)
            lineStart = index + 1
        }
        // The last line is the empty line ending the head.
        guard lines.count >= 2, lines.last?.isEmpty == true else {
            throw HandshakeError.malformed("empty message head")
        }
        lines.removeLast()
        self.startLine = Array(lines[0])
        if self.startLine.contains(0x0D) || self.startLine.contains(0) {
            throw HandshakeError.malformed("control character in the start line")
        }
        self.headers = []
        for line in lines.dropFirst() {
            guard let first = line.first else { throw HandshakeError.malformed("empty header line") }
            if first == 0x20 || first == 0x09 { throw HandshakeError.malformed("obsolete header line folding") }
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else {
                throw HandshakeError.malformed("header line without a colon")
            }
            let name = line[line.startIndex..<colon]
            guard !name.isEmpty, name.allSatisfy(HTTPSyntax.isTokenCharacter) else {
                throw HandshakeError.malformed("invalid header name")
            }
            var value = line[(colon + 1)...]
            while let byte = value.first, byte == 0x20 || byte == 0x09 { value = value.dropFirst() }
            while let byte = value.last, byte == 0x20 || byte == 0x09 { value = value.dropLast() }
            guard value.allSatisfy({ $0 >= 0x20 && $0 != 0x7F || $0 == 0x09 }) else {
                throw HandshakeError.malformed("control character in a header value")
            }
            self.headers.append(HTTPHeader(
                name: String(decoding: name, as: UTF8.self), value: String(decoding: value, as: UTF8.self)))
        }
    }

    /// All values of header `name` (case-insensitive), in order.
    func values(_ name: String) -> [String] {
        self.headers.filter { HTTPSyntax.equalsIgnoringCase($0.name, name) }.map(\.value)
    }

    /// The comma-separated elements of every `name` header, trimmed, empty elements dropped.
    func listElements(_ name: String) -> [String] {
        self.values(name).flatMap(HTTPSyntax.splitList)
    }
}

/// One HTTP header field.
struct HTTPHeader: Hashable, Sendable {
    var name: String
    var value: String

    init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

/// HTTP tokens (RFC 9110 §5.6.2): what header names and subprotocol names must be (the command line and the test
/// server check theirs with it).
package enum HTTPToken {
    /// True when `text` is a non-empty HTTP token, and so may be sent as a header name or a subprotocol.
    package static func isValid(_ text: String) -> Bool {
        HTTPSyntax.isToken(text)
    }
}

enum HTTPSyntax {
    static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
            UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
            UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }

    static func isToken(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy(isTokenCharacter)
    }

    /// ASCII case-insensitive comparison (header names and tokens are ASCII).
    static func equalsIgnoringCase(_ lhs: String, _ rhs: String) -> Bool {
        lhs.utf8.elementsEqual(rhs.utf8) { lowercased($0) == lowercased($1) }
    }

    static func lowercased(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
    }

    /// Splits a comma-separated list, respecting quoted strings, trimming whitespace, dropping empty elements.
    static func splitList(_ value: String) -> [String] {
        split(value, on: UInt8(ascii: ",")).pieces.map(trimmed).filter { !$0.isEmpty }
    }

    /// Splits `value` at every `separator` outside a quoted string (escapes inside quotes honoured), keeping every
    /// piece as is, empty ones included; `unterminatedQuote` says whether a quoted string was left open.
    static func split(_ value: String, on separator: UInt8) -> (pieces: [[UInt8]], unterminatedQuote: Bool) {
        var pieces: [[UInt8]] = []
        var current: [UInt8] = []
        var inQuotes = false
        var escaped = false
        for byte in value.utf8 {
            if inQuotes {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inQuotes = false
                }
                current.append(byte)
            } else if byte == separator {
                pieces.append(current)
                current.removeAll()
            } else {
                if byte == UInt8(ascii: "\"") { inQuotes = true }
                current.append(byte)
            }
        }
        pieces.append(current)
        return (pieces, inQuotes)
    }

    static func trimmed(_ bytes: [UInt8]) -> String {
        var slice = bytes[...]
        while let byte = slice.first, byte == 0x20 || byte == 0x09 { slice = slice.dropFirst() }
        while let byte = slice.last, byte == 0x20 || byte == 0x09 { slice = slice.dropLast() }
        return String(decoding: slice, as: UTF8.self)
    }

    /// True when the list in `values` contains `token` (case-insensitive).
    static func listContains(_ values: [String], _ token: String) -> Bool {
        values.contains { equalsIgnoringCase($0, token) }
    }

    /// The extension name of a `Sec-WebSocket-Extensions` element (before the first `;`).
    static func extensionName(_ element: String) -> String {
        trimmed(Array(element.utf8.prefix { $0 != UInt8(ascii: ";") }))
    }

    /// The value of the magic GUID handshake: base64(SHA-1(key + GUID)) (RFC 6455 §4.2.2).
    static func acceptValue(forKey key: String) -> String {
        Base64.encode(SHA1.hash(Array((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8)))
    }

    /// A header value that can be sent as is: no control characters except HTAB, no leading/trailing space.
    static func isSendableValue(_ value: String) -> Bool {
        value.utf8.allSatisfy { $0 >= 0x20 && $0 != 0x7F || $0 == 0x09 }
    }
}
