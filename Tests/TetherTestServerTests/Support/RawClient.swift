#if os(Linux)
import Glibc
import TetherPOSIX
import TetherTestServer
@testable import TetherWire

/// What a raw client saw, in order.
enum RawClientEvent: Sendable {
    case handshake(Result<HandshakeResponse, HandshakeError>)
    case message(WireMessage)
    case protocolError(ProtocolError)
    case ended(TCPConnection.End)
}

/// Runs on the loop thread: parses the handshake response, then decodes frames, forwarding
/// everything into a stream (the tests' only way to wait). Optionally answers pings.
private final class RawClientHandler: TCPConnectionHandler {
    private let continuation: AsyncStream<RawClientEvent>.Continuation
    private var parser: HandshakeResponseParser?
    private var decoder = WebSocketDecoder(role: .client)
    private var encoder = WebSocketEncoder(role: .client)
    private let answersPings: Bool

    init(
        continuation: AsyncStream<RawClientEvent>.Continuation,
        parser: HandshakeResponseParser,
        answersPings: Bool
    ) {
        self.continuation = continuation
        self.parser = parser
        self.answersPings = answersPings
    }

    func received(_ bytes: UnsafeRawBufferPointer, on connection: TCPConnection) {
        if var parser = self.parser {
            parser.append(bytes)
            do throws(HandshakeError) {
                guard let response = try parser.parse() else {
                    self.parser = parser
                    return
                }
                self.parser = nil
                self.continuation.yield(.handshake(.success(response)))
                self.decoder.append(response.remaining)
            } catch {
                self.parser = nil
                self.continuation.yield(.handshake(.failure(error)))
                return
            }
        } else {
            self.decoder.append(bytes)
        }
        do throws(ProtocolError) {
            while let message = try self.decoder.next() {
                if self.answersPings, case .ping(let payload) = message {
                    var pong: [UInt8] = []
                    try? self.encoder.pong(payload, into: &pong)
                    connection.write(pong)
                }
                self.continuation.yield(.message(message))
            }
        } catch {
            self.continuation.yield(.protocolError(error))
        }
    }

    func ended(_ end: TCPConnection.End, on connection: TCPConnection) {
        self.continuation.yield(.ended(end))
        self.continuation.finish()
    }
}

/// A WebSocket client built from TetherPOSIX and TetherWire pieces, with no logic of its own
/// beyond framing: tests drive every step.
struct RawClient {
    let connection: TCPConnection
    private var iterator: AsyncStream<RawClientEvent>.AsyncIterator
    private var encoder = WebSocketEncoder(role: .client)
    private(set) var end: TCPConnection.End?

    /// Connects and sends an upgrade request (or `rawRequest` instead, for malformed ones); to `port` instead of the
    /// server's when given (a proxy in front of it).
    static func connect(
        to server: TestServer,
        port: Int? = nil,
        target: String = "/",
        headers: [(name: String, value: String)] = [],
        subprotocols: [String] = [],
        rawRequest: [UInt8]? = nil,
        appending extraBytes: [UInt8] = [],
        answersPings: Bool = false
    ) async throws -> RawClient {
        let connection = try await TCPConnection.connect(
            host: server.host, port: port ?? server.port, timeout: .seconds(2))
        let handshake = try ClientHandshake(
            host: server.host, port: server.port, secure: false, target: target,
            subprotocols: subprotocols, headers: headers, key: randomHandshakeKey())
        let (stream, continuation) = AsyncStream.makeStream(of: RawClientEvent.self)
        let parser = HandshakeResponseParser(handshake: handshake)
        try await connection.loop.submit {
            connection.setHandler(
                RawClientHandler(continuation: continuation, parser: parser, answersPings: answersPings))
        }
        try await connection.send((rawRequest ?? handshake.request) + extraBytes)
        return RawClient(connection: connection, iterator: stream.makeAsyncIterator())
    }

    /// Connects and completes the handshake.
    static func open(
        _ server: TestServer,
        target: String = "/",
        headers: [(name: String, value: String)] = [],
        subprotocols: [String] = [],
        answersPings: Bool = false
    ) async throws -> (RawClient, HandshakeResponse) {
        var client = try await self.connect(
            to: server, target: target, headers: headers, subprotocols: subprotocols, answersPings: answersPings)
        let response = try await client.handshakeResponse().get()
        return (client, response)
    }

    /// The next event, or nil after the end.
    mutating func next() async -> RawClientEvent? {
        let event = await self.iterator.next()
        if case .ended(let end)? = event { self.end = end }
        return event
    }

    /// Waits for the handshake's outcome.
    mutating func handshakeResponse() async -> Result<HandshakeResponse, HandshakeError> {
        while let event = await self.next() {
            if case .handshake(let result) = event { return result }
        }
        return .failure(.malformed("connection ended before a response: \(String(describing: self.end))"))
    }

    /// The next message, or nil when the connection ended (or broke the protocol) first.
    mutating func nextMessage() async -> WireMessage? {
        while let event = await self.next() {
            switch event {
            case .message(let message): return message
            case .protocolError, .ended: return nil
            case .handshake: continue
            }
        }
        return nil
    }

    /// Every remaining message and the end.
    mutating func readToEnd() async -> (messages: [WireMessage], end: TCPConnection.End?) {
        var messages: [WireMessage] = []
        while let event = await self.next() {
            if case .message(let message) = event { messages.append(message) }
        }
        return (messages, self.end)
    }

    /// Sends the frames `build` encodes, in one write.
    mutating func send(
        _ build: (inout WebSocketEncoder<SystemRandomNumberGenerator>, inout [UInt8]) throws -> Void
    ) async throws {
        var bytes: [UInt8] = []
        try build(&self.encoder, &bytes)
        try await self.connection.send(bytes)
    }

    mutating func send(text: String) async throws {
        var bytes: [UInt8] = []
        self.encoder.text(text, into: &bytes)
        try await self.connection.send(bytes)
    }

    mutating func send(binary: [UInt8]) async throws {
        var bytes: [UInt8] = []
        self.encoder.binary(binary, into: &bytes)
        try await self.connection.send(bytes)
    }

    mutating func ping(_ payload: [UInt8]) async throws {
        var bytes: [UInt8] = []
        try self.encoder.ping(payload, into: &bytes)
        try await self.connection.send(bytes)
    }

    mutating func close(code: UInt16?, reason: String = "") async throws {
        var bytes: [UInt8] = []
        try self.encoder.close(code: code, reason: reason, into: &bytes)
        try await self.connection.send(bytes)
    }
}

/// Milliseconds elapsed since `start`.
/// A fresh `Sec-WebSocket-Key`, made in a synchronous function: under ThreadSanitizer, the instrumented `inout` access
/// to a zero-sized `SystemRandomNumberGenerator` kept in an async function's frame reads the shadow of an address that
/// is not memory (the generator has no storage) and crashes with SEGV inside TSan; in a synchronous frame it is a real
/// stack address.
func randomHandshakeKey() -> [UInt8] {
    var random = SystemRandomNumberGenerator()
    return ClientHandshake.randomKey(using: &random)
}

func milliseconds(since start: ContinuousClock.Instant) -> Int {
    let (seconds, attoseconds) = (ContinuousClock.now - start).components
    return Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000)
}
#endif
