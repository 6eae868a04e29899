import TetherWire

/// What the test server does on one connection. A plain value: start from a static factory and
/// combine with the modifiers, for example `Scenario.echo.delayingPongs(byMilliseconds: 200)` or
/// `Scenario.send(count: 10_000, size: 32).closing(afterMilliseconds: 500, code: 1001)`.
///
/// Every "after N ms" counts from the moment the scenario is applied, which is when the client's
/// upgrade request has been read (for an accepted handshake: when the connection opened).
public struct Scenario: Sendable, Equatable, CustomStringConvertible {
    /// How the opening handshake is answered.
    public enum Handshake: Sendable, Equatable {
        /// `101 Switching Protocols`.
        case accept
        /// An HTTP error `status` (200...999, not 101) with `Connection: close`, optionally with
        /// `Retry-After: seconds`; then the TCP connection is closed.
        case reject(status: Int, retryAfterSeconds: Int?)
        /// A redirect: `status` (300...399) with `Location: location` (sent as given, relative or absolute) and
        /// `Connection: close`; then the TCP connection is closed. Recorded as `HandshakeOutcome.redirected`.
        case redirect(status: Int, location: String)
        /// The request is read and recorded but never answered (a client's handshake timeout fires).
        /// Of the other settings only `resetAfterMilliseconds` applies.
        case ignore
    }

    /// How client pings are answered.
    public enum Pong: Sendable, Equatable {
        /// A pong with the ping's payload, at once.
        case immediate
        /// A pong with the ping's payload, `milliseconds` after the ping arrived.
        case delayed(milliseconds: Int)
        /// Pings are recorded and never answered.
        case never
    }

    /// The kind of a data message.
    public enum MessageKind: Sendable, Equatable, CustomStringConvertible {
        case text
        case binary

        public var description: String {
            switch self {
            case .text: "text"
            case .binary: "binary"
            }
        }
    }

    /// A close frame the server sends on its own.
    public struct Close: Sendable, Equatable {
        /// When to send it.
        public var afterMilliseconds: Int
        /// The close code; must be valid on the wire (1000–1003, 1007–1014, 3000–4999).
        public var code: UInt16
        /// UTF-8, at most 123 bytes.
        public var reason: String

        public init(afterMilliseconds: Int, code: UInt16, reason: String = "") {
            self.afterMilliseconds = afterMilliseconds
            self.code = code
            self.reason = reason
        }
    }

    /// Messages the server sends on its own.
    ///
    /// Message `i` (counting from 0) is sent at `i * intervalMilliseconds`; its payload is the
    /// decimal digits of `i` followed by `.` up to `size` bytes (cut to `size` if shorter), so a
    /// client can check the order. With interval 0 the messages go out as fast as the socket
    /// takes them, in batches of at most 64 KiB, so that pings and pongs keep flowing in between.
    public struct Stream: Sendable, Equatable {
        /// How many messages.
        public var count: Int
        /// Payload bytes per message.
        public var size: Int
        /// Text (default) or binary.
        public var kind: MessageKind
        /// Milliseconds between messages; 0 (default) sends as fast as the socket takes them.
        public var intervalMilliseconds: Int

        public init(count: Int, size: Int, kind: MessageKind = .text, intervalMilliseconds: Int = 0) {
            self.count = count
            self.size = size
            self.kind = kind
            self.intervalMilliseconds = intervalMilliseconds
        }
    }

    /// A numbered feed the whole server broadcasts: message `k` goes out at `k * intervalMilliseconds` after the
    /// server started, to every connection open then, so that two connections of one client (an old one and its
    /// replacement) carry the same numbers at the same moments and a gap between them shows as a missing number.
    /// A connection joins at the first tick at or after its open. The payload is the decimal digits of `k` followed by
    /// `.` up to `size` bytes (never cut: a short `size` still carries every digit), as text.
    public struct Broadcast: Sendable, Equatable {
        /// Milliseconds between two numbers; at least 1.
        public var intervalMilliseconds: Int
        /// Payload bytes per message, at least the digits of the number.
        public var size: Int

        public init(intervalMilliseconds: Int, size: Int = 16) {
            self.intervalMilliseconds = intervalMilliseconds
            self.size = size
        }

        /// The number a message of the feed carries, or nil for a payload that is not one.
        public static func number(in payload: some Collection<UInt8>) -> Int? {
            let digits = payload.prefix { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
            guard !digits.isEmpty, digits.count <= 18, payload.dropFirst(digits.count).allSatisfy({ $0 == 0x2E })
            else { return nil }
            return Int(String(decoding: digits, as: UTF8.self))
        }
    }

    /// How the handshake is answered. Default `.accept`.
    public var handshake: Handshake = .accept
    /// The subprotocol to select when the client offers it; nil (default) selects none. A client
    /// that does not offer it gets no `Sec-WebSocket-Protocol` header.
    public var subprotocol: String?
    /// Extra headers of the `101` response (a cookie, a session id), in order. Default none. Names must be HTTP
    /// tokens, values free of control characters but tab; the headers the handshake sets are refused.
    public var responseHeaders: [HeaderField] = []
    /// How pings are answered. Default `.immediate`.
    public var pong: Pong = .immediate
    /// Send every received text or binary message back, with the same kind. Default off.
    public var echo = false
    /// Messages to send on open. Default none.
    public var stream: Stream?
    /// The server-wide numbered feed this connection receives while open. Default none.
    public var broadcast: Broadcast?
    /// Speak the acknowledging, resumable feed protocol (see `DeliveryProtocol`). Default none.
    public var delivery: DeliveryProtocol?
    /// Send a ping every this many ms (payload: an 8-byte big-endian counter from 1). Default none.
    public var pingIntervalMilliseconds: Int?
    /// A close frame to send on its own. Default none.
    public var close: Close?
    /// Reset the TCP connection (RST) after this many ms. Default none.
    public var resetAfterMilliseconds: Int?
    /// After sending its close frame, how long the server waits for the client's before it resets
    /// the TCP connection. Default 1,000 ms.
    public var closeTimeoutMilliseconds = 1000
    /// Record the payload of every data message received (`MessageRecord.payload`). Default off:
    /// only kinds, sizes and times are recorded.
    public var recordsPayloads = false
    /// What the server does with a `permessage-deflate` offer. Default nil: it declines (answers no extension).
    public var deflate: Deflate?
    /// Once open with permessage-deflate agreed, send one binary message of this many MiB of zeros, compressed in
    /// advance to about 1 KiB per MiB (1 GiB: about 1 MB on the wire): a decompression bomb, for a test of a
    /// client's bound on what it inflates. Default nil: none. Without an agreement nothing is sent.
    public var deflateBombMebibytes: Int?

    /// How the server answers a client's `permessage-deflate` offers.
    public enum Deflate: Sendable, Equatable {
        /// Accepts the first offer `policy` can (RFC 7692's negotiation, `PerMessageDeflate.respond`); declines
        /// when none fits.
        case accept(PerMessageDeflateServerPolicy)
        /// Answers `Sec-WebSocket-Extensions: answer` whatever was offered, and compresses as `parameters` say: a
        /// server that breaks the rules on purpose, for a test of a client's checks.
        case answer(String, parameters: PerMessageDeflateParameters)
    }

    /// The normal server: accepts, answers pings at once, does nothing else.
    public init() {}

    // MARK: Factories

    /// Accepts and answers pings at once.
    public static let normal = Scenario()

    /// Answers pings `milliseconds` late.
    public static func pongDelay(milliseconds: Int) -> Scenario {
        Scenario().delayingPongs(byMilliseconds: milliseconds)
    }

    /// Never answers pings.
    public static let noPong = Scenario().ignoringPings()

    /// Sends a close frame after `milliseconds`.
    public static func close(afterMilliseconds: Int, code: UInt16, reason: String = "") -> Scenario {
        Scenario().closing(afterMilliseconds: afterMilliseconds, code: code, reason: reason)
    }

    /// Resets the TCP connection after `milliseconds`.
    public static func reset(afterMilliseconds: Int) -> Scenario {
        Scenario().resetting(afterMilliseconds: afterMilliseconds)
    }

    /// Rejects the handshake with `status` and optionally `Retry-After`.
    public static func reject(status: Int, retryAfterSeconds: Int? = nil) -> Scenario {
        var scenario = Scenario()
        scenario.handshake = .reject(status: status, retryAfterSeconds: retryAfterSeconds)
        return scenario
    }

    /// Redirects the handshake to `location` with `status` (default 302, Found): pick it by path to build a chain,
    /// a loop or a downgrade, for example `{ $0.path == "/old" ? .redirect(to: "/new") : .echo }`.
    public static func redirect(status: Int = 302, to location: String) -> Scenario {
        var scenario = Scenario()
        scenario.handshake = .redirect(status: status, location: location)
        return scenario
    }

    /// Accepts the TCP connection, reads the request and never answers it.
    public static let silentHandshake: Scenario = {
        var scenario = Scenario()
        scenario.handshake = .ignore
        return scenario
    }()

    /// Sends `count` messages of `size` bytes, one every `everyMilliseconds` (0: as fast as possible).
    public static func send(
        count: Int,
        size: Int,
        kind: MessageKind = .text,
        everyMilliseconds: Int = 0
    ) -> Scenario {
        Scenario().sending(count: count, size: size, kind: kind, everyMilliseconds: everyMilliseconds)
    }

    /// Broadcasts the server-wide numbered feed (see `Broadcast`) to every open connection.
    public static func broadcast(everyMilliseconds: Int, size: Int = 16) -> Scenario {
        Scenario().broadcasting(everyMilliseconds: everyMilliseconds, size: size)
    }

    /// Sends a ping every `everyMilliseconds`.
    public static func serverPings(everyMilliseconds: Int) -> Scenario {
        Scenario().pinging(everyMilliseconds: everyMilliseconds)
    }

    /// Echoes every data message.
    public static let echo = Scenario().echoing()

    // MARK: Modifiers

    /// This scenario, answering pings `milliseconds` late.
    public func delayingPongs(byMilliseconds milliseconds: Int) -> Scenario {
        var copy = self
        copy.pong = .delayed(milliseconds: milliseconds)
        return copy
    }

    /// This scenario, never answering pings.
    public func ignoringPings() -> Scenario {
        var copy = self
        copy.pong = .never
        return copy
    }

    /// This scenario, sending a close frame after `afterMilliseconds`.
    public func closing(afterMilliseconds: Int, code: UInt16, reason: String = "") -> Scenario {
        var copy = self
        copy.close = Close(afterMilliseconds: afterMilliseconds, code: code, reason: reason)
        return copy
    }

    /// This scenario, resetting the TCP connection after `milliseconds`.
    public func resetting(afterMilliseconds milliseconds: Int) -> Scenario {
        var copy = self
        copy.resetAfterMilliseconds = milliseconds
        return copy
    }

    /// This scenario, also sending a stream of messages (see `Stream`).
    public func sending(count: Int, size: Int, kind: MessageKind = .text, everyMilliseconds: Int = 0) -> Scenario {
        var copy = self
        copy.stream = Stream(count: count, size: size, kind: kind, intervalMilliseconds: everyMilliseconds)
        return copy
    }

    /// This scenario, also receiving the server-wide numbered feed (see `Broadcast`).
    public func broadcasting(everyMilliseconds: Int, size: Int = 16) -> Scenario {
        var copy = self
        copy.broadcast = Broadcast(intervalMilliseconds: everyMilliseconds, size: size)
        return copy
    }

    /// This scenario, also sending a ping every `everyMilliseconds`.
    public func pinging(everyMilliseconds: Int) -> Scenario {
        var copy = self
        copy.pingIntervalMilliseconds = everyMilliseconds
        return copy
    }

    /// This scenario, also echoing data messages.
    public func echoing() -> Scenario {
        var copy = self
        copy.echo = true
        return copy
    }

    /// This scenario, selecting `subprotocol` when the client offers it.
    public func selecting(subprotocol: String) -> Scenario {
        var copy = self
        copy.subprotocol = subprotocol
        return copy
    }

    /// This scenario, answering the upgrade with the extra header `name: value` (after any added before).
    public func addingResponseHeader(name: String, value: String) -> Scenario {
        var copy = self
        copy.responseHeaders.append(HeaderField(name: name, value: value))
        return copy
    }

    /// The headers a `101` response carries by itself (`responseHeaders` may not add them).
    static let handshakeHeaders: Set<String> = [
        "upgrade", "connection", "sec-websocket-accept", "sec-websocket-protocol", "sec-websocket-extensions",
        "content-length", "transfer-encoding",
    ]

    /// This scenario, accepting permessage-deflate under `policy` (default: the RFC's defaults, window 15, context
    /// takeover on both sides).
    public func deflating(_ policy: PerMessageDeflateServerPolicy = PerMessageDeflateServerPolicy()) -> Scenario {
        var copy = self
        copy.deflate = .accept(policy)
        return copy
    }

    /// This scenario, accepting permessage-deflate and then sending a message that inflates to `mebibytes` MiB of
    /// zeros from about 1 KiB per MiB on the wire (`deflateBombMebibytes`).
    public func sendingDeflateBomb(inflatedMebibytes mebibytes: Int) -> Scenario {
        var copy = self.deflate == nil ? self.deflating() : self
        copy.deflateBombMebibytes = mebibytes
        return copy
    }

    /// This scenario, recording the payloads of received data messages.
    public func recordingPayloads() -> Scenario {
        var copy = self
        copy.recordsPayloads = true
        return copy
    }

    // MARK: Validation

    /// Checks every value; the server calls it before applying a scenario.
    /// - Throws: `TestServerError.invalidScenario` naming the first bad field.
    public func validate() throws(TestServerError) {
        func check(_ condition: Bool, _ field: String) throws(TestServerError) {
            if !condition { throw TestServerError.invalidScenario(field) }
        }
        if case .reject(let status, let retryAfter) = self.handshake {
            try check((200...999).contains(status), "reject status must be 200...999")
            try check((retryAfter ?? 0) >= 0, "Retry-After must not be negative")
        }
        if case .redirect(let status, let location) = self.handshake {
            try check((300...399).contains(status), "redirect status must be 300...399")
            try check(
                !location.isEmpty && location.utf8.allSatisfy { $0 >= 0x20 && $0 != 0x7F },
                "redirect location must be a non-empty header value without control characters")
        }
        if case .delayed(let milliseconds) = self.pong {
            try check(milliseconds >= 0, "pong delay must not be negative")
        }
        if let subprotocol = self.subprotocol {
            try check(HTTPToken.isValid(subprotocol), "subprotocol must be an HTTP token")
        }
        for header in self.responseHeaders {
            try check(HTTPToken.isValid(header.name), "response header names must be HTTP tokens")
            try check(!Self.handshakeHeaders.contains(header.name.lowercased()),
                      "response header \(header.name) is the handshake's own")
            try check(header.value.utf8.allSatisfy { $0 >= 0x20 && $0 != 0x7F || $0 == 0x09 },
                      "response header values must be free of control characters")
        }
        if let stream = self.stream {
            try check(stream.count >= 0 && stream.size >= 0, "stream count and size must not be negative")
            try check(stream.intervalMilliseconds >= 0, "stream interval must not be negative")
        }
        if let broadcast = self.broadcast {
            try check(broadcast.intervalMilliseconds > 0, "broadcast interval must be positive")
            try check(broadcast.size >= 0, "broadcast size must not be negative")
        }
        if let delivery = self.delivery {
            try check(!delivery.streams.isEmpty, "delivery needs at least one stream")
            try check(delivery.streams.allSatisfy { !$0.isEmpty && !$0.contains(" ") && $0.utf8.count <= 64 },
                      "delivery stream names must be 1...64 bytes without spaces")
            try check(delivery.intervalMilliseconds > 0, "delivery interval must be positive")
            try check((0...100_000).contains(delivery.retained), "delivery retained must be 0...100000")
        }
        if let interval = self.pingIntervalMilliseconds {
            try check(interval > 0, "ping interval must be positive")
        }
        if let close = self.close {
            try check(close.afterMilliseconds >= 0, "close delay must not be negative")
            try check(CloseCode.isValidOnWire(close.code), "close code \(close.code) may not be sent")
            try check(close.reason.utf8.count <= 123, "close reason must fit in 123 bytes")
        }
        if let reset = self.resetAfterMilliseconds {
            try check(reset >= 0, "reset delay must not be negative")
        }
        try check(self.closeTimeoutMilliseconds >= 0, "close timeout must not be negative")
        if case .accept(let policy) = self.deflate {
            let range = PerMessageDeflateOffer.windowBitsRange
            try check(range.contains(policy.serverMaxWindowBits), "deflate server window must be 9...15")
            try check(range.contains(policy.clientMaxWindowBits), "deflate client window must be 9...15")
        }
        if case .answer(_, let parameters) = self.deflate {
            let range = PerMessageDeflateOffer.windowBitsRange
            try check(range.contains(parameters.serverMaxWindowBits), "deflate server window must be 9...15")
            try check(range.contains(parameters.clientMaxWindowBits), "deflate client window must be 9...15")
        }
        if let mebibytes = self.deflateBombMebibytes {
            try check((1...4096).contains(mebibytes), "deflate bomb must inflate to 1...4096 MiB")
        }
    }



    /// A one-line summary, for example `accept, pong delayed 200 ms, echo`.
    public var description: String {
        var parts: [String] = []
        switch self.handshake {
        case .accept: parts.append("accept")
        case .reject(let status, let retryAfter):
            parts.append("reject \(status)" + (retryAfter.map { " retry-after \($0) s" } ?? ""))
        case .redirect(let status, _): parts.append("redirect \(status)")  // the location may hold a token
        case .ignore: parts.append("never answer the handshake")
        }
        if let subprotocol = self.subprotocol { parts.append("subprotocol \(subprotocol)") }
        if !self.responseHeaders.isEmpty {
            parts.append("headers " + self.responseHeaders.map(\.name).joined(separator: " "))  // names only
        }
        switch self.pong {
        case .immediate: break
        case .delayed(let milliseconds): parts.append("pong delayed \(milliseconds) ms")
        case .never: parts.append("no pong")
        }
        if self.echo { parts.append("echo") }
        if self.deflate != nil { parts.append("permessage-deflate") }
        if let bomb = self.deflateBombMebibytes { parts.append("deflate bomb \(bomb) MiB") }
        if let stream = self.stream {
            let every = "every \(stream.intervalMilliseconds) ms"
            parts.append("send \(stream.count) \(stream.kind) x \(stream.size) B \(every)")
        }
        if let broadcast = self.broadcast {
            parts.append("broadcast a number every \(broadcast.intervalMilliseconds) ms x \(broadcast.size) B")
        }
        if let delivery = self.delivery {
            let sends = delivery.acknowledges ? "acknowledges sends" : "takes sends unacknowledged"
            parts.append("delivery protocol: " + sends
                + ", feeds \(delivery.streams.joined(separator: " ")) every \(delivery.intervalMilliseconds) ms, "
                + "\(delivery.retained) retained")
        }
        if let interval = self.pingIntervalMilliseconds { parts.append("ping every \(interval) ms") }
        if let close = self.close { parts.append("close \(close.code) after \(close.afterMilliseconds) ms") }
        if let reset = self.resetAfterMilliseconds { parts.append("reset after \(reset) ms") }
        return parts.joined(separator: ", ")
    }
}
