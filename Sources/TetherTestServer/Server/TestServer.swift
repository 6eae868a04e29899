#if os(Linux)
import Synchronization
import TetherPOSIX
import TetherWire

/// A controllable WebSocket server (RFC 6455, server side) for tests: listens on loopback, applies
/// a `Scenario` to each connection, and records what it saw and did.
///
/// ```swift
/// let server = try TestServer(scenario: .pongDelay(milliseconds: 200))
/// // connect a client to server.url(path: "/chat") ...
/// let records = try await server.waitUntil { $0.first?.pongsSent.count == 1 }
/// await server.stop()
/// ```
///
/// All protocol work runs on one event loop thread (its own unless one is given): no thread per
/// connection, and an idle connection holds no buffers. Call `stop()` when done.
///
/// Memory and descriptors stay bounded whatever clients do (a ping flood, sockets that never send a
/// request): every list in a record is capped at `recordLimit` entries with exact totals, at most
/// `endedConnectionLimit` ended connections are remembered, a connection must complete its upgrade
/// request within `handshakeTimeout`, at most `maximumHandshakingConnections` may be in the handshake at
/// once (a newer one resets the oldest), and running out of descriptors on accept resets the oldest
/// connection still in the handshake, if it has waited at least `TCPListener.acceptBackoff`, or else
/// pauses accepting for that long, instead of retrying in a busy loop.
public final class TestServer: Sendable {
    /// The numeric address listened on (`127.0.0.1` or `::1`).
    public let host: String
    /// The bound port.
    public let port: Int
    /// The loop that runs the server.
    let loop: EventLoop
    private let ownsLoop: Bool
    private let listener: TCPListener
    private let core: ServerCore

    /// Starts listening and serving at once, applying one scenario to every connection.
    /// - Parameters:
    ///   - configuration: where to listen and the bounds to keep (see `TestServer.Configuration`); default
    ///     loopback, an ephemeral port, `ws://`.
    ///   - scenario: what the server does on each connection (default `.normal`).
    /// - Throws: `TestServerError.invalidScenario` for an out-of-range scenario value, `.invalidArgument` for a
    ///   setting out of range (see `Configuration`) or a certificate or key that cannot be used, `.listen` when the
    ///   socket cannot be bound.
    public convenience init(
        configuration: Configuration = Configuration(), scenario: Scenario = .normal
    ) throws(TestServerError) {
        try scenario.validate()
        try self.init(configuration: configuration, scenario: { _ in scenario })
    }

    /// Starts listening and serving at once, picking each connection's scenario from its upgrade request.
    /// - Parameters:
    ///   - configuration: where to listen and the bounds to keep (see `TestServer.Configuration`).
    ///   - scenario: picks the scenario for each connection from its upgrade request. Called on the server's loop
    ///     thread; keep it quick.
    /// - Throws: `TestServerError.invalidArgument` for a setting out of range (see `Configuration`) or a
    ///   certificate or key that cannot be used, `.listen` when the socket cannot be bound.
    public init(
        configuration: Configuration = Configuration(),
        scenario: @escaping @Sendable (ConnectionContext) -> Scenario
    ) throws(TestServerError) {
        try configuration.validate()
        var tlsContext: TLSContext?
        if let tls = configuration.tls {
            do throws(TLSConfigurationError) {
                tlsContext = try TLSContext.server(tls.options)
            } catch {
                throw .invalidArgument("tls (\(error))")
            }
        }
        let loop = configuration.loop
        let serverLoop: EventLoop
        if let loop {
            serverLoop = loop
        } else {
            do throws(SocketError) {
                serverLoop = try EventLoop(name: "tether-testsrv", clock: configuration.clock)
            } catch {
                throw .listen(error.description)
            }
        }
        let listener: TCPListener
        do throws(SocketError) {
            // A deep backlog: benchmarks open a thousand connections at once.
            listener = try TCPListener.bind(
                host: configuration.host, port: configuration.port, backlog: 1024, loop: serverLoop,
                namespace: configuration.namespace
            )
        } catch {
            if loop == nil { serverLoop.shutdown() }
            throw .listen(error.description)
        }
        self.host = listener.address.host
        self.port = listener.port
        self.loop = serverLoop
        self.ownsLoop = loop == nil
        self.listener = listener
        let recorder = Recorder(
            start: serverLoop.now, loop: serverLoop, recordLimit: configuration.recordLimit,
            endedConnectionLimit: configuration.endedConnectionLimit)
        let core = ServerCore(
            loop: serverLoop, recorder: recorder, maximumMessageSize: configuration.maximumMessageSize,
            handshakeTimeout: configuration.handshakeTimeout,
            maximumHandshakingConnections: configuration.maximumHandshakingConnections,
            outboundWatermarks: configuration.outboundWatermarks, tls: tlsContext,
            deliveryIDLimit: configuration.deliveryIDLimit, scenario: scenario)
        self.core = core
        listener.start(
            onAccept: { connection in core.accepted(connection) },
            onDescriptorsExhausted: { core.makeRoomForAccept() })
    }

    deinit {
        // A server dropped without `stop()` must not leave its thread and sockets behind.
        if self.ownsLoop, !self.loop.inEventLoop { self.loop.shutdown() }
    }

    /// `ws://HOST:PORT/path`, or `wss://` when serving TLS (an IPv6 host in brackets).
    /// - Parameter path: the request target, starting with `/` (default `/`).
    public func url(path: String = "/") -> String {
        let host = self.host.contains(":") ? "[\(self.host)]" : self.host
        let target = path.hasPrefix("/") ? path : "/" + path
        return "\(self.core.tls == nil ? "ws" : "wss")://\(host):\(self.port)\(target)"
    }

    // MARK: Records

    /// A snapshot of the records of every live connection and of the last `endedConnectionLimit` ended
    /// ones, in order of acceptance. Until more than that many connections have ended, the record of
    /// connection `i` is at `i - 1`; use `connection(_:)` to look one up by its index in any case.
    public var connections: [ConnectionRecord] { self.core.recorder.records }

    /// A snapshot of connection `index` (from 1), or nil if it has not been accepted yet or its record
    /// was dropped (it ended before the last `endedConnectionLimit` ended connections).
    public func connection(_ index: Int) -> ConnectionRecord? {
        self.connections.record(ofConnection: index)
    }

    /// Connections accepted since the server started, whether or not their records are still kept.
    public var acceptedConnectionCount: Int { self.core.recorder.acceptedCount }

    /// Ended connections whose records were dropped to keep at most `endedConnectionLimit`.
    public var droppedConnectionCount: Int { self.core.recorder.droppedConnectionCount }

    /// What the server's application took through the delivery protocol (`Scenario.DeliveryProtocol`), over every
    /// connection: each acknowledged send's id once.
    public var deliveryRecord: DeliveryRecord { self.core.delivery.withLock { $0.snapshot } }

    /// Events dropped, over every stream from `events(bufferLimit:)`, because a reader fell behind.
    public var droppedEventCount: Int { self.core.recorder.droppedEventCount }

    /// Events from now on, one per thing that happened on a connection (see `ServerEvent`), in
    /// order. Each call returns a new stream; it finishes when the server stops.
    ///
    /// The stream is bounded: it holds at most `bufferLimit` events not yet read (default 10,000). When
    /// its reader falls further behind (a flood, a slow console), the oldest unread events are dropped and
    /// counted in `droppedEventCount`; the records (`connections`) are not affected.
    public func events(bufferLimit: Int = 10_000) -> AsyncStream<ServerEvent> {
        self.core.recorder.events(bufferLimit: bufferLimit)
    }

    /// Waits until `condition` holds for the records, without polling: it is checked now and after
    /// every recorded change. Returns the records that satisfied it.
    /// - Parameters:
    ///   - timeout: a guard against a wait that would never end (default 5 s), not a delay.
    ///   - condition: called under the recorder's lock on the server's thread; keep it quick and
    ///     do not call the server from it.
    /// - Throws: `.timedOut`, `.cancelled`, or `.stopped` when the server stops first.
    @discardableResult
    public func waitUntil(
        timeout: Duration = .seconds(5),
        _ condition: @escaping @Sendable ([ConnectionRecord]) -> Bool
    ) async throws(TestServerError) -> [ConnectionRecord] {
        try await self.core.recorder.wait(timeout: timeout, until: condition).get()
    }

    /// Waits until connection `index` (from 1) exists and `condition` holds for its record.
    @discardableResult
    public func waitForConnection(
        _ index: Int,
        timeout: Duration = .seconds(5),
        where condition: @escaping @Sendable (ConnectionRecord) -> Bool = { _ in true }
    ) async throws(TestServerError) -> ConnectionRecord {
        let records = try await self.waitUntil(timeout: timeout) { records in
            records.record(ofConnection: index).map(condition) ?? false
        }
        // The condition held for this snapshot, so the record is in it.
        return records.record(ofConnection: index)!
    }

    /// Waits until connection `index` (from 1) has ended.
    @discardableResult
    public func waitForEnd(
        ofConnection index: Int,
        timeout: Duration = .seconds(5)
    ) async throws(TestServerError) -> ConnectionRecord {
        try await self.waitForConnection(index, timeout: timeout) { $0.hasEnded }
    }

    /// Tests: `gate` decides each accept attempt before the kernel does (`TCPListener.setAcceptGate`),
    /// so that a test can run the server out of descriptors without lowering the process's limit.
    func setAcceptGate(_ gate: (@Sendable () -> Int32?)?) {
        self.listener.setAcceptGate(gate)
    }

    // MARK: Control

    /// Sends a close frame with `code` and `reason` on connection `index` (from 1) now, as `Scenario.close` does at
    /// its time: from then on the server echoes, answers and streams nothing more on it, records what still arrives,
    /// and resets the connection if the client does not answer within the scenario's close timeout. For a test that
    /// decides when the server closes (between two of its own steps) rather than after a fixed time.
    /// - Returns: false (nothing sent) when that connection is not open: not accepted yet, still in its handshake,
    ///   closing already, or ended.
    /// - Throws: `TestServerError.invalidArgument` for a code that may not be sent (valid: 1000–1003, 1007–1014,
    ///   3000–4999) or a reason over 123 bytes of UTF-8.
    @discardableResult
    public func close(connection index: Int, code: UInt16, reason: String = "") async throws(TestServerError) -> Bool {
        guard CloseCode.isValidOnWire(code) else { throw .invalidArgument("close code \(code) may not be sent") }
        guard reason.utf8.count <= 123 else { throw .invalidArgument("close reason must fit in 123 bytes") }
        let core = self.core
        return await self.onLoop { core.live(index)?.driver.value.close(code: code, reason: reason) ?? false }
    }

    /// Resets connection `index` (from 1) now (TCP RST), as `Scenario.reset` does at its time; recorded as
    /// `.serverReset`. Clients see a reset, as when a server process dies.
    /// - Returns: false when that connection is not live (not accepted yet, or ended).
    @discardableResult
    public func reset(connection index: Int) async -> Bool {
        let core = self.core
        return await self.onLoop { core.live(index)?.driver.value.resetNow() ?? false }
    }

    /// Runs `body` on the server's loop thread and returns its result; false once the loop has shut down.
    private func onLoop(_ body: @escaping @Sendable () -> Bool) async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            if !self.loop.execute({ continuation.resume(returning: body()) }) {
                continuation.resume(returning: false)
            }
        }
    }

    // MARK: Stop

    /// Stops listening, resets every live connection (clients see a TCP reset, as when a server
    /// process dies; use `Scenario.close` for a clean close), cancels every timer, and returns once
    /// every socket is closed and, when the server owns its loop, the loop's thread has exited.
    /// Pending waits fail with `.stopped`; event streams finish. Idempotent.
    public func stop() async {
        let core = self.core
        let listener = self.listener
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let accepted = self.loop.execute {
                listener.close()
                core.stop { continuation.resume() }
            }
            if !accepted { continuation.resume() }
        }
        if self.ownsLoop { self.loop.shutdown() }
        core.recorder.stop()
    }
}

/// What the listener and the connections share.
final class ServerCore: Sendable {
    let loop: EventLoop
    let recorder: Recorder
    let maximumMessageSize: Int
    let handshakeTimeout: Duration
    let maximumHandshakingConnections: Int
    let outboundWatermarks: Watermarks
    /// Serves `wss://` with this context; nil for `ws://`.
    let tls: TLSContext?
    let scenario: @Sendable (ConnectionContext) -> Scenario
    /// When the server started: tick 0 of a scenario's broadcast (`Scenario.Broadcast`) and delivery feeds.
    let started: ContinuousClock.Instant
    /// The ids the delivery protocol took (`Scenario.DeliveryProtocol`), server-wide.
    let delivery: Mutex<DeliveryLedger>
    private let registry: LoopBound<Registry>

    private final class Registry {
        var live: [Int: ServerConnection] = [:]
        /// The live connections still waiting for their upgrade request, oldest first (ascending index).
        var handshaking: [(index: Int, acceptedAt: ContinuousClock.Instant)] = []
        var isStopping = false
        var stopped: [@Sendable () -> Void] = []
    }

    init(
        loop: EventLoop,
        recorder: Recorder,
        maximumMessageSize: Int,
        handshakeTimeout: Duration,
        maximumHandshakingConnections: Int,
        outboundWatermarks: Watermarks,
        tls: TLSContext?,
        deliveryIDLimit: Int,
        scenario: @escaping @Sendable (ConnectionContext) -> Scenario
    ) {
        self.tls = tls
        self.delivery = Mutex(DeliveryLedger(limit: deliveryIDLimit))
        self.loop = loop
        self.recorder = recorder
        self.maximumMessageSize = maximumMessageSize
        self.handshakeTimeout = handshakeTimeout
        self.maximumHandshakingConnections = maximumHandshakingConnections
        self.outboundWatermarks = outboundWatermarks
        self.scenario = scenario
        self.started = loop.now
        self.registry = LoopBound(Registry(), loop: loop)
    }

    /// Loop thread. With `maximumHandshakingConnections` already in the handshake, the oldest of them
    /// is reset first.
    func accepted(_ connection: TCPConnection) {
        let registry = self.registry.value
        guard !registry.isStopping else {
            connection.reset()
            return
        }
        while registry.handshaking.count >= self.maximumHandshakingConnections, self.dropOldestHandshaking() {}
        let index = self.recorder.addConnection(clientHost: connection.remoteAddress?.host)
        let stream: any ByteStream =
            if let tls = self.tls {
                TLSStream(tcp: connection, session: TLSSession(serverContext: tls))
            } else {
                connection
            }
        let shell = ServerConnection(index: index, connection: stream, core: self)
        registry.live[index] = shell
        registry.handshaking.append((index, self.loop.now))
        stream.setStreamHandler(shell)
        shell.driver.value.startHandshakeTimer(shell: shell)
    }

    /// Loop thread: resets the oldest connection still in the handshake, freeing its descriptor at
    /// once, if it was accepted at or before `cutoff` (nil: whenever). Returns false when there is none.
    func dropOldestHandshaking(acceptedBy cutoff: ContinuousClock.Instant? = nil) -> Bool {
        let registry = self.registry.value
        guard let oldest = registry.handshaking.first else { return false }
        if let cutoff, oldest.acceptedAt > cutoff { return false }
        registry.handshaking.removeFirst()
        registry.live[oldest.index]?.driver.value.dropInHandshake()
        return true
    }

    /// Loop thread: `accept` failed for lack of descriptors. Frees one by resetting the oldest
    /// connection in the handshake, but only one that has had a back-off's time to send its request:
    /// a burst of connections accepted just now (their requests often already waiting, unread) must
    /// not be reset one by one to accept the rest of the backlog. Returns whether one was freed.
    func makeRoomForAccept() -> Bool {
        self.dropOldestHandshaking(acceptedBy: self.loop.now - TCPListener.acceptBackoff)
    }

    /// Loop thread: connection `index` has left the handshake (its request was read, or it ended).
    func handshakeEnded(_ index: Int) {
        let registry = self.registry.value
        // Usually the oldest: requests tend to complete in order of acceptance.
        if registry.handshaking.first?.index == index {
            registry.handshaking.removeFirst()
        } else if let position = registry.handshaking.firstIndex(where: { $0.index == index }) {
            registry.handshaking.remove(at: position)
        }
    }

    /// Loop thread: the connection's socket is closed and its end recorded.
    func connectionEnded(_ index: Int) {
        let registry = self.registry.value
        registry.live[index] = nil
        if registry.isStopping, registry.live.isEmpty { self.finishStop() }
    }

    /// Loop thread: the live connection `index`, if any.
    func live(_ index: Int) -> ServerConnection? {
        self.registry.value.live[index]
    }

    /// Loop thread: resets every live connection; `completion` runs once all have ended.
    func stop(completion: @escaping @Sendable () -> Void) {
        let registry = self.registry.value
        registry.isStopping = true
        registry.stopped.append(completion)
        if registry.live.isEmpty {
            self.finishStop()
            return
        }
        for shell in registry.live.values { shell.driver.value.stop() }
    }

    private func finishStop() {
        let registry = self.registry.value
        let completions = registry.stopped
        registry.stopped.removeAll()
        for completion in completions { completion() }
    }
}
#endif
