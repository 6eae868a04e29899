#if os(Linux)
import Foundation
import Testing
import TetherPOSIX
@testable import TetherWire

/// What the server side of one scripted connection saw, in order.
enum PeerEvent: Sendable {
    case bytes([UInt8])
    case ended(ByteStreamEnd)
}

/// A connection accepted by a `ScriptedPeer`, with its handler already reading.
struct AcceptedConnection: Sendable {
    let tcp: TCPConnection
    /// `tcp`, or TLS over it.
    let stream: any ByteStream
    let events: AsyncStream<PeerEvent>
}

/// Forwards a server connection's callbacks into an `AsyncStream` (copying the borrowed bytes).
private final class PeerHandler: ByteStreamHandler {
    let continuation: AsyncStream<PeerEvent>.Continuation

    init(continuation: AsyncStream<PeerEvent>.Continuation) {
        self.continuation = continuation
    }

    func received(_ bytes: UnsafeRawBufferPointer, on stream: any ByteStream) {
        self.continuation.yield(.bytes(Array(bytes)))
    }

    func ended(_ end: ByteStreamEnd, on stream: any ByteStream) {
        self.continuation.yield(.ended(end))
        self.continuation.finish()
    }
}

/// A raw WebSocket server on loopback whose every step a test scripts: it can answer the handshake properly,
/// wrongly or never, and send well-formed or malformed frames. Built from `TCPListener` and TetherWire's server
/// pieces (`HandshakeRequestParser`, `ServerHandshake`, a server `WebSocketEncoder` and `WebSocketDecoder`).
struct ScriptedPeer {
    let listener: TCPListener
    /// Serving `wss://`.
    let secure: Bool
    private var accepted: AsyncStream<AcceptedConnection>.AsyncIterator
    private let acceptedSink: AsyncStream<AcceptedConnection>.Continuation

    /// Listens on `host` (`127.0.0.1` or `::1`) on an ephemeral port; over TLS with `tls`.
    init(host: String = "127.0.0.1", tls: TLSServerOptions? = nil) throws {
        self.listener = try TCPListener.bind(host: host)
        self.secure = tls != nil
        let context = try tls.map { try TLSContext.server($0) }
        let (stream, continuation) = AsyncStream.makeStream(of: AcceptedConnection.self)
        self.accepted = stream.makeAsyncIterator()
        self.acceptedSink = continuation
        self.listener.start { tcp in
            let (events, sink) = AsyncStream.makeStream(of: PeerEvent.self)
            let stream: any ByteStream =
                if let context { TLSStream(tcp: tcp, session: TLSSession(serverContext: context)) } else { tcp }
            stream.setStreamHandler(PeerHandler(continuation: sink))
            continuation.yield(AcceptedConnection(tcp: tcp, stream: stream, events: events))
        }
    }

    var port: Int { self.listener.port }

    /// `ws://` URL of this peer with `path` (which may carry a query).
    func url(_ path: String = "/") -> URL {
        let host = self.listener.address.family == .ipv6 ? "[::1]" : "127.0.0.1"
        return URL(string: "\(self.secure ? "wss" : "ws")://\(host):\(self.port)\(path)")!
    }

    /// Waits for the next client connection. Only for a client that surely connects (no short connect timeout).
    mutating func accept() async -> PeerConnection {
        guard let connection = await self.nextAccepted() else { preconditionFailure("accept() after stop()") }
        return connection
    }

    /// The next connection accepted, or nil after `stop()` once every accepted connection was returned.
    mutating func nextAccepted() async -> PeerConnection? {
        await self.accepted.next().map(PeerConnection.init)
    }

    /// Stops listening; connections already accepted stay open.
    func stop() async {
        await self.listener.close()
        self.acceptedSink.finish()
    }
}

/// The server side of one connection, driven step by step from a test.
final class PeerConnection {
    /// The TCP connection itself (over TLS, closing it skips the close_notify).
    let tcp: TCPConnection
    /// `tcp`, or TLS over it: what the peer reads and writes.
    let stream: any ByteStream
    private var events: AsyncStream<PeerEvent>.AsyncIterator
    private var buffered: [UInt8] = []
    private var requestParser = HandshakeRequestParser()
    private var decoder = WebSocketDecoder(role: .server)
    private var encoder = WebSocketEncoder(role: .server)
    /// The client's upgrade request, once read.
    private(set) var request: HandshakeRequest?
    /// How the TCP connection ended, once seen.
    private(set) var end: ByteStreamEnd?

    init(_ accepted: AcceptedConnection) {
        self.tcp = accepted.tcp
        self.stream = accepted.stream
        self.events = accepted.events.makeAsyncIterator()
    }

    // MARK: Handshake

    /// Reads the client's upgrade request; bytes after it go to the frame decoder.
    func readRequest() async throws -> HandshakeRequest {
        while true {
            self.requestParser.append(self.buffered)
            self.buffered.removeAll()
            if let request = try self.requestParser.parse() {
                self.request = request
                self.decoder.append(request.remaining)
                return request
            }
            guard await self.readMore() else { throw PeerError.endedBeforeRequest }
        }
    }

    /// Reads raw bytes up to and including the first empty line (an HTTP head such as a proxy's CONNECT request);
    /// the bytes after it stay buffered for `readRequest`. Nil if the connection ends first.
    func readHead() async -> String? {
        let end: [UInt8] = [13, 10, 13, 10]
        while true {
            if let range = self.buffered.indices.first(where: { self.buffered[$0...].starts(with: end) }) {
                let head = Array(self.buffered[..<(range + 4)])
                self.buffered.removeFirst(range + 4)
                return String(decoding: head, as: UTF8.self)
            }
            guard await self.readMore() else { return nil }
        }
    }

    /// Reads exactly `count` raw bytes (a SOCKS message); the bytes after them stay buffered. Nil if the
    /// connection ends first.
    func read(count: Int) async -> [UInt8]? {
        while self.buffered.count < count {
            guard await self.readMore() else { return nil }
        }
        let bytes = Array(self.buffered.prefix(count))
        self.buffered.removeFirst(count)
        return bytes
    }

    /// Accepts the request read by `readRequest`, selecting `subprotocol`.
    func acceptRequest(subprotocol: String? = nil) async throws {
        let request = try #require(self.request, "read the request first")
        try await self.write(ServerHandshake.accept(request, subprotocol: subprotocol))
    }

    /// Reads the request and accepts it (selecting `subprotocol`).
    @discardableResult
    func open(subprotocol: String? = nil) async throws -> HandshakeRequest {
        let request = try await self.readRequest()
        try await self.acceptRequest(subprotocol: subprotocol)
        return request
    }

    // MARK: Writing

    func write(_ bytes: [UInt8]) async throws {
        try await self.stream.send(bytes, sealing: false)
    }

    /// Sends a text message, in frames of at most `fragmentSize` bytes.
    func sendText(_ text: String, fragmentSize: Int = .max) async throws {
        var encoder = WebSocketEncoder(role: .server, fragmentSize: fragmentSize)
        var bytes: [UInt8] = []
        encoder.text(text, into: &bytes)
        try await self.write(bytes)
    }

    /// Sends a binary message, in frames of at most `fragmentSize` bytes.
    func sendBinary(_ payload: [UInt8], fragmentSize: Int = .max) async throws {
        var encoder = WebSocketEncoder(role: .server, fragmentSize: fragmentSize)
        var bytes: [UInt8] = []
        encoder.binary(payload, into: &bytes)
        try await self.write(bytes)
    }

    func sendPing(_ payload: [UInt8]) async throws {
        try await self.write(self.frame { (encoder, bytes) throws(WireUsageError) in
            try encoder.ping(payload, into: &bytes)
        })
    }

    func sendPong(_ payload: [UInt8]) async throws {
        try await self.write(self.frame { (encoder, bytes) throws(WireUsageError) in
            try encoder.pong(payload, into: &bytes)
        })
    }

    func sendClose(code: UInt16?, reason: String = "") async throws {
        try await self.write(self.frame { (encoder, bytes) throws(WireUsageError) in
            try encoder.close(code: code, reason: reason, into: &bytes)
        })
    }

    private func frame(
        _ body: (inout WebSocketEncoder<SystemRandomNumberGenerator>, inout [UInt8]) throws(WireUsageError) -> Void
    ) throws -> [UInt8] {
        var bytes: [UInt8] = []
        try body(&self.encoder, &bytes)
        return bytes
    }

    /// Drops the connection with an RST.
    func reset() {
        self.tcp.reset()
    }

    // MARK: Reading

    /// The next message or control frame from the client, or nil once the connection ended without one.
    func nextMessage() async throws -> WireMessage? {
        precondition(self.request != nil, "read the request first")
        while true {
            if let message = try self.decoder.next() { return message }
            guard await self.readMore() else { return nil }
            self.decoder.append(self.buffered)
            self.buffered.removeAll()
        }
    }

    /// The next raw bytes the client sends (such as its TLS ClientHello), or nil once the connection ended.
    func readBytes() async -> [UInt8]? {
        if self.buffered.isEmpty, !(await self.readMore()) { return nil }
        defer { self.buffered.removeAll() }
        return self.buffered
    }

    /// Reads (and discards) until the TCP connection ends, and returns how it ended.
    func waitForEnd() async -> ByteStreamEnd {
        while await self.readMore() {
            self.buffered.removeAll()
        }
        return self.end!
    }

    /// Waits for more bytes into `buffered`; false once the connection has ended.
    private func readMore() async -> Bool {
        guard self.end == nil else { return false }
        switch await self.events.next() {
        case .bytes(let bytes)?:
            self.buffered.append(contentsOf: bytes)
            return true
        case .ended(let end)?:
            self.end = end
            return false
        case nil:
            return false
        }
    }
}

enum PeerError: Error {
    case endedBeforeRequest
}
#endif
