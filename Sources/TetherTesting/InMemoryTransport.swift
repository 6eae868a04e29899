import Foundation
import Synchronization
import Tether

/// A scripted transport for tests: no sockets. Each connection the client makes is handed to the test, which plays
/// the network's side — opens it, delivers messages and pongs, fails pings, ends it — and reads what the client
/// asked it to do (messages sent, pings, closes).
///
/// ```swift
/// let transport = InMemoryTransport()
/// let configuration = WebSocketClient<ManualClock>.Configuration(url: url, transport: transport)
/// let client = try WebSocketClient(configuration: configuration, clock: clock)
/// await client.start()
/// let connection = try #require(await transport.nextConnection())    // generation 1
/// connection.emit(.opened(subprotocol: nil))
/// connection.emit(.message(.text("hello")))
/// connection.emit(.ended(.peerClosed(code: 1001, reason: "")))        // the client retries on a new connection
/// ```
///
/// Every connection made is announced on `connections`, in order (the n-th is the n-th attempt's, so generation
/// n + 1 of a fresh client). A connection's events are the ones the test emits; as with a real transport, `.ended`
/// is the last and finishes its stream.
public final class InMemoryTransport: WebSocketTransport {
    /// Every connection the client makes, in order. Single consumer (`nextConnection()` reads it).
    public let connections: AsyncStream<InMemoryConnection>
    private let announce: AsyncStream<InMemoryConnection>.Continuation
    private let made = Mutex<[InMemoryConnection]>([])

    /// When true, each connection's close frame stays "unsent" until the test calls `flushClose()`.
    private let holdsCloseFrames: Bool

    /// - Parameter holdsCloseFrames: keep each connection's close frame "unsent" (`waitUntilCloseSent()` waiting)
    ///   until the test calls `flushClose()` on it; by default it is sent at once.
    public init(holdsCloseFrames: Bool = false) {
        (self.connections, self.announce) = AsyncStream.makeStream()
        self.holdsCloseFrames = holdsCloseFrames
    }

    public func connect(_ request: TransportRequest) -> any TransportConnection {
        let connection = InMemoryConnection(request: request, holdsCloseFrame: self.holdsCloseFrames)
        self.made.withLock { $0.append(connection) }
        self.announce.yield(connection)
        return connection
    }

    /// Waits for the next connection the client makes. Nil if none comes within `timeout`, a guard that turns a
    /// missing connection into a failed expectation instead of a hung test (it normally returns on the connection).
    public func nextConnection(timeout: Duration = .seconds(10)) async -> InMemoryConnection? {
        let connections = self.connections
        return await withDeadline(timeout) {
            var iterator = connections.makeAsyncIterator()
            return await iterator.next()
        }
    }

    /// Starts `client`, opens the connection it makes, and waits until `recorder` sees the client open.
    /// - Throws: `TetherTestingError.timedOut` when no connection or no open state came within `timeout`.
    public func open<ClockType>(
        _ client: WebSocketClient<ClockType>, _ recorder: EventRecorder, subprotocol: String? = nil,
        timeout: Duration = .seconds(10)
    ) async throws -> InMemoryConnection {
        await client.start()
        guard let connection = await self.nextConnection(timeout: timeout) else {
            throw TetherTestingError.timedOut("the client's connection")
        }
        connection.emit(.opened(subprotocol: subprotocol))
        guard await recorder.state(.open, timeout: timeout) != nil else {
            throw TetherTestingError.timedOut("the client's open state")
        }
        return connection
    }

    /// Every connection made so far, in order.
    public var all: [InMemoryConnection] { self.made.withLock { $0 } }
}

/// One in-memory connection. `emit` plays the transport's side; `commands` and `log` record the client's side.
public final class InMemoryConnection: TransportConnection {
    /// What the client asked the connection to do.
    public enum Command: Equatable, Sendable {
        case send(WebSocketMessage)
        case ping(UInt64)
        case close(code: UInt16, reason: String)
    }

    /// The request the client connected with (URL, headers, subprotocols, limits).
    public let request: TransportRequest
    public let events: AsyncStream<TransportEvent>
    /// The client's commands as they come. Single consumer (`nextCommand()` reads it).
    public let commands: AsyncStream<Command>
    private let eventSink: AsyncStream<TransportEvent>.Continuation
    private let commandSink: AsyncStream<Command>.Continuation
    private struct State {
        var open = false
        var ended = false
        var log: [Command] = []
        var closePending = false
        var closeSentWaiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())
    private let holdsCloseFrame: Bool

    /// - Parameter holdsCloseFrame: keep the close frame "unsent" until `flushClose()` (default: sent at once).
    public init(request: TransportRequest, holdsCloseFrame: Bool = false) {
        self.request = request
        self.holdsCloseFrame = holdsCloseFrame
        (self.events, self.eventSink) = AsyncStream.makeStream()
        (self.commands, self.commandSink) = AsyncStream.makeStream()
    }

    /// Plays a transport event: `.opened`, `.message`, `.pong(id:)` (answer a ping from `nextCommand()`),
    /// `.pingFailed(id:)`, `.ended`. After `.ended` the stream finishes, as the transport contract requires.
    public func emit(_ event: TransportEvent) {
        self.state.withLock { state in
            if case .opened = event { state.open = true }
            if case .ended = event { state.ended = true }
        }
        self.eventSink.yield(event)
        if case .ended = event {
            self.eventSink.finish()
            self.flushClose()  // nothing can be pending after the end
        }
    }

    /// Everything the client has asked this connection to do, in order.
    public var log: [Command] { self.state.withLock { $0.log } }

    /// Accepted while the connection is open (after `.opened`, before `.ended`); otherwise throws
    /// `WebSocketSendError.connectionFailed`.
    public nonisolated(nonsending) func send(_ message: WebSocketMessage) async throws {
        let accepted = self.state.withLock { state in
            guard state.open, !state.ended else { return false }
            state.log.append(.send(message))
            return true
        }
        guard accepted else { throw WebSocketSendError.connectionFailed }
        self.commandSink.yield(.send(message))
    }

    public func sendPing(id: UInt64) {
        self.state.withLock { $0.log.append(.ping(id)) }
        self.commandSink.yield(.ping(id))
    }

    /// Records the close; the connection does not end by itself: emit `.ended(.closedLocally)` (or another end).
    public func close(code: UInt16, reason: String) {
        self.state.withLock { state in
            state.log.append(.close(code: code, reason: reason))
            state.closePending = self.holdsCloseFrame && !state.ended
        }
        self.commandSink.yield(.close(code: code, reason: reason))
    }

    public func waitUntilCloseSent() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let waiting = self.state.withLock { state in
                guard state.closePending else { return false }
                state.closeSentWaiters.append(continuation)
                return true
            }
            if !waiting { continuation.resume() }
        }
    }

    /// Plays the kernel taking the held close frame: `waitUntilCloseSent` callers return.
    public func flushClose() {
        let waiters = self.state.withLock { state in
            state.closePending = false
            defer { state.closeSentWaiters.removeAll() }
            return state.closeSentWaiters
        }
        for waiter in waiters {
            waiter.resume()
        }
    }

    /// True while a caller waits in `waitUntilCloseSent`.
    public var hasCloseSentWaiter: Bool { self.state.withLock { !$0.closeSentWaiters.isEmpty } }

    /// Waits for the client's next command on this connection. Nil if none comes within `timeout` (a guard against
    /// a hung test; it normally returns on the command).
    public func nextCommand(timeout: Duration = .seconds(10)) async -> Command? {
        let commands = self.commands
        return await withDeadline(timeout) {
            var iterator = commands.makeAsyncIterator()
            return await iterator.next()
        }
    }
}
