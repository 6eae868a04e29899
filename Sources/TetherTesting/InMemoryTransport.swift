import Foundation
import Synchronization
import Tether

/// A scripted transport for tests: no sockets. Each connection the client makes is handed to the test, which plays
/// the network's side — opens it, delivers messages and pongs, fails pings, ends it — and reads what the client
/// asked it to do (messages sent, pings, closes).
///
/// ```swift
/// let transport = InMemoryTransport()
/// let configuration = WebSocketClient.Configuration(url: url, transport: transport)
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
    public func open(
        _ client: WebSocketClient, _ recorder: EventRecorder, subprotocol: String? = nil,
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
///
/// A send is accepted at once, unless the test holds sends (`holdSends()`) to play a write in flight: a held send
/// is recorded as it comes, and returns (or throws) only when the test releases it (`releaseHeldSends`,
/// `holdSends(false)`), or the connection ends.
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
        var holdsSends = false
        var inboundProgress: InboundProgress?
        var progressAsked = 0
        var attemptTimings: AttemptTimings?
        /// Held sends by ticket, in the order they came.
        var heldSends: [Int: HeldSend] = [:]
        var nextHeldSend = 0
    }

    private enum SendAdmission {
        case refused
        case accepted
        case held(ticket: Int)
    }

    private enum HeldSend {
        /// Recorded; its sender is about to park.
        case pending
        case parked(CheckedContinuation<Void, any Error>)
        /// Released before its sender parked: how it ends (nil: written).
        case released(WebSocketSendError?)
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
            self.releaseHeldSends(throwing: .notOpen)  // as a send waiting for room on a socket that ends
        }
    }

    /// Everything the client has asked this connection to do, in order.
    public var log: [Command] { self.state.withLock { $0.log } }

    /// Accepted while the connection is open (after `.opened`, before `.ended`); otherwise throws
    /// `WebSocketSendError.connectionFailed`. While sends are held (`holdSends()`), an accepted send is recorded
    /// (in `log` and `commands`) and then waits for `releaseHeldSends(throwing:)`, `holdSends(false)` or the end.
    public nonisolated(nonsending) func send(_ message: WebSocketMessage) async throws {
        let admission = self.state.withLock { state -> SendAdmission in
            guard state.open, !state.ended else { return .refused }
            state.log.append(.send(message))
            guard state.holdsSends else { return .accepted }
            let ticket = state.nextHeldSend
            state.nextHeldSend += 1
            state.heldSends[ticket] = .pending
            return .held(ticket: ticket)
        }
        if case .refused = admission { throw WebSocketSendError.connectionFailed }
        self.commandSink.yield(.send(message))
        guard case .held(let ticket) = admission else { return }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let outcome: WebSocketSendError?? = self.state.withLock { state in
                if case .released(let error)? = state.heldSends.removeValue(forKey: ticket) { return .some(error) }
                state.heldSends[ticket] = .parked(continuation)
                return nil
            }
            switch outcome {
            case nil: break  // parked
            case .some(nil): continuation.resume()
            case .some(let error?): continuation.resume(throwing: error)
            }
        }
    }

    /// With `held` (the default), each send from now on is recorded and then held until the test releases it: the
    /// test plays a write that takes its time (a socket waiting for room), to act while it is in flight. With
    /// `held` false, sends are accepted at once again, and those held are released as written.
    public func holdSends(_ held: Bool = true) {
        self.state.withLock { $0.holdsSends = held }
        if !held { self.releaseHeldSends() }
    }

    /// Ends every send held now, in the order they came: it returns (written), or throws `error` (`.notOpen`: as
    /// if nothing of it was sent; `.connectionFailed`: broken during the write). The next sends are still held
    /// if sends are. The connection's `.ended` releases them with `.notOpen`.
    public func releaseHeldSends(throwing error: WebSocketSendError? = nil) {
        let parked = self.state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            var parked: [CheckedContinuation<Void, any Error>] = []
            for ticket in state.heldSends.keys.sorted() {
                switch state.heldSends[ticket] {
                case .parked(let continuation)?:
                    parked.append(continuation)
                    state.heldSends[ticket] = nil
                case .pending?:
                    state.heldSends[ticket] = .released(error)  // its sender finds it when it parks
                case .released?, nil:
                    break
                }
            }
            return parked
        }
        for continuation in parked {
            if let error { continuation.resume(throwing: error) } else { continuation.resume() }
        }
    }

    /// Plays what the transport has received (a frame arriving, and when its bytes came): `inboundProgress()`
    /// returns it from now on, whenever the client asks. Nil (the default): a transport that cannot tell.
    public func setInboundProgress(_ progress: InboundProgress?) {
        self.state.withLock { $0.inboundProgress = progress }
    }

    /// How many times the client asked `inboundProgress()` (it asks only when a pong is overdue).
    public var inboundProgressAsked: Int { self.state.withLock { $0.progressAsked } }

    public func inboundProgress() -> InboundProgress? {
        self.state.withLock { state in
            state.progressAsked += 1
            return state.inboundProgress
        }
    }

    /// Plays how long the attempt's steps took: `attemptTimings()` returns them from now on, so that the client puts
    /// them on the attempt's `opened` or failure `closed` record (emit `.opened` or `.ended` after setting them). Nil
    /// (the default): a transport that does not measure.
    public func setAttemptTimings(_ timings: AttemptTimings?) {
        self.state.withLock { $0.attemptTimings = timings }
    }

    public func attemptTimings() -> AttemptTimings? {
        self.state.withLock { $0.attemptTimings }
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
