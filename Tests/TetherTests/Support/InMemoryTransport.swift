import Foundation
import Synchronization
import Testing
import Tether
import TetherCore

/// A transport whose connections the test drives by hand: it emits their events and reads what the
/// client asked them to do. Every connection made is announced on `connections`, in order.
final class InMemoryTransport: WebSocketTransport {
    let connections: AsyncStream<InMemoryConnection>
    private let announce: AsyncStream<InMemoryConnection>.Continuation
    private let made = Mutex<[InMemoryConnection]>([])

    /// When true, each connection's close frame stays "unsent" until the test calls `flushClose()`.
    private let holdsCloseFrames: Bool

    init(holdsCloseFrames: Bool = false) {
        (self.connections, self.announce) = AsyncStream.makeStream()
        self.holdsCloseFrames = holdsCloseFrames
    }

    func connect(_ request: TransportRequest) -> any TransportConnection {
        let connection = InMemoryConnection(request: request, holdsCloseFrame: self.holdsCloseFrames)
        self.made.withLock { $0.append(connection) }
        self.announce.yield(connection)
        return connection
    }

    /// Waits for the next connection the client makes (nil after the deadline guard).
    func nextConnection() async -> InMemoryConnection? {
        let connections = self.connections
        return await withDeadline {
            var iterator = connections.makeAsyncIterator()
            return await iterator.next()
        }
    }

    /// Starts `client`, opens the connection it makes, and waits until `probe` sees the client open.
    func open<ClockType>(
        _ client: WebSocketClient<ClockType>, _ probe: EventRecorder
    ) async throws -> InMemoryConnection {
        await client.start()
        let connection = try #require(await self.nextConnection())
        connection.emit(.opened(subprotocol: nil))
        #expect(await probe.state(.open) != nil)
        return connection
    }

    /// Every connection made so far.
    var all: [InMemoryConnection] { self.made.withLock { $0 } }
}

/// One in-memory connection. `emit` plays the transport's side; `commands` records the client's side.
final class InMemoryConnection: TransportConnection {
    enum Command: Equatable, Sendable {
        case send(WebSocketMessage)
        case ping(UInt64)
        case close(code: UInt16, reason: String)
    }

    let request: TransportRequest
    let events: AsyncStream<TransportEvent>
    let commands: AsyncStream<Command>
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
    init(request: TransportRequest, holdsCloseFrame: Bool = false) {
        self.request = request
        self.holdsCloseFrame = holdsCloseFrame
        (self.events, self.eventSink) = AsyncStream.makeStream()
        (self.commands, self.commandSink) = AsyncStream.makeStream()
    }

    /// Plays a transport event. After `.ended` the stream finishes, as the contract requires;
    /// later events are the "late callbacks" some tests inject on purpose through `emitLate`.
    func emit(_ event: TransportEvent) {
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
    var log: [Command] { self.state.withLock { $0.log } }

    nonisolated(nonsending) func send(_ message: WebSocketMessage) async throws {
        let accepted = self.state.withLock { state in
            guard state.open, !state.ended else { return false }
            state.log.append(.send(message))
            return true
        }
        guard accepted else { throw WebSocketSendError.connectionFailed }
        self.commandSink.yield(.send(message))
    }

    func sendPing(id: UInt64) {
        self.state.withLock { $0.log.append(.ping(id)) }
        self.commandSink.yield(.ping(id))
    }

    func close(code: UInt16, reason: String) {
        self.state.withLock { state in
            state.log.append(.close(code: code, reason: reason))
            state.closePending = self.holdsCloseFrame && !state.ended
        }
        self.commandSink.yield(.close(code: code, reason: reason))
    }

    func waitUntilCloseSent() async {
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
    func flushClose() {
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
    var hasCloseSentWaiter: Bool { self.state.withLock { !$0.closeSentWaiters.isEmpty } }

    /// Waits for the client's next command on this connection (nil after the deadline guard).
    func nextCommand() async -> Command? {
        let commands = self.commands
        return await withDeadline {
            var iterator = commands.makeAsyncIterator()
            return await iterator.next()
        }
    }
}
