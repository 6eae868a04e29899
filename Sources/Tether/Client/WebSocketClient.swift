import Foundation
import Synchronization
import TetherCore
import TetherWire

/// A WebSocket client that keeps one logical session alive over many connections.
///
/// The client owns a pure `SessionMachine`. Every input — the user's calls, transport callbacks,
/// the timer and path updates — enters this actor, is turned into one machine event, and the
/// machine's action is run by `run(_:)` on the connection the action names by its generation. One timer
/// sleeps until the machine's next wake time; nothing polls.
///
/// A started client keeps running (its readers hold it) until `stop()` or the cancellation of `run()`.
///
/// ```swift
/// let configuration = WebSocketConfiguration(url: URL(string: "wss://example.com/feed")!)
/// let client = try WebSocketClient(configuration: configuration)
/// await client.start()
/// for await event in client.events { ... }
/// ```
public actor WebSocketClient {
    /// Everything the client reports, in order. Unicast: iterate it from one task only.
    /// Unbounded, so that no received message is ever dropped; it finishes when the client is deinitialized.
    public nonisolated var events: WebSocketEvents { WebSocketEvents(channel: self.eventSink) }

    private nonisolated let eventSink: EventChannel
    private let configuration: Configuration
    private let request: TransportRequest
    /// The injected clock (tests pass a manual one), read in milliseconds since the client was created.
    private let clock: any ClientClock
    private var machine: SessionMachine<SplitMix64>

    /// Live connections by generation. An entry is removed when its close action runs or it ended.
    private var connections: [Int: any TransportConnection] = [:]
    /// Connections whose events are still being read, by generation, with the callers of `stop()` waiting for the
    /// reading to finish: at the connection's `.ended` when it delivers directly, when its `events` finish otherwise.
    private var readers: [Int: [CheckedContinuation<Void, Never>]] = [:]
    /// The one timer, made on first use: the clock's own timer on this actor's executor when it offers one (the
    /// continuous clock on Linux), else a task sleeping on the clock.
    private var timer: (any ClientTimer)?
    /// The machine's wake time the timer is armed for; nil when it is not armed.
    private var timerWake: Int?
    /// The running path monitor, if any.
    private var pathMonitor: PathFeed?
    private var runWaiters: [CheckedContinuation<Void, Never>] = []
    /// Where a `.now` send goes, as the machine last decided it (`SessionMachine.sendRoute`): kept outside the
    /// actor (set by `afterEvent`), so that sending never waits for the actor, which may be busy with received
    /// messages.
    private nonisolated let sendRoute = Mutex(PublishedRoute.closed)
    /// The machine's route and the connection `sendRoute` holds, as last published.
    private var publishedRoute: (route: SendRoute, connection: ObjectIdentifier?) = (.closed, nil)
    /// `events` may have been held or released since `applyReadingHold` last looked.
    private var readingHoldChanged = false
    /// Callers of `waitUntilReadingHeld()`.
    private var readingHeldWaiters: [CheckedContinuation<Void, Never>] = []
    /// Callers of `enterBackground()` waiting for the machine's close wait to end.
    private var closeWaiters: [CheckedContinuation<Void, Never>] = []
    /// Whether `events` tells this client when its consumer has caught up (set once, on the first start).
    private var listensForRelease = false
    /// The payloads of the messages in the machine's outbox (and of the one being written), by ticket.
    private var queued: [Int: OutgoingMessage] = [:]
    /// `.now` sends the machine parked behind the outbox, in order.
    private var parkedSends: [ParkedSend] = []
    /// The task running the write the machine ordered, if one is in flight.
    private var writer: Task<Void, Never>?
    /// The tasks sending each connection's greeting, by generation, until they finish.
    private var greeters: [Int: Task<Void, Never>] = [:]
    /// How many `.now` sends wait for the outbox, each time one starts waiting (the latest only): for tests.
    private nonisolated let sendsWaitingForOutbox: AsyncStream<Int>
    private nonisolated let sendsWaitingSink: AsyncStream<Int>.Continuation
    /// Callers of `waitUntilOutboxEmpty()`.
    private var outboxEmptyWaiters: [CheckedContinuation<Void, Never>] = []

    /// Creates a client driven by `clock` (tests pass a manual clock).
    /// - Parameter randomSeed: seeds the backoff jitter; nil (the default) seeds from the system generator.
    /// - Throws: `WebSocketConfigurationError` when a duration or number is out of range (see
    ///   `WebSocketConfiguration.validate()`). The URL is checked when connecting: a URL the transport cannot
    ///   serve fails the session visibly (`connectFailed(.unsupported)`), like any other connect failure.
    public init(
        configuration: Configuration, clock: some Clock<Duration>, randomSeed: UInt64? = nil
    ) throws(WebSocketConfigurationError) {
        try configuration.validate()
        #if os(Linux)
        self.eventSink = EventChannel(watermarks: configuration.inboundWatermarks, batcher: configuration.eventLoop)
        #else
        self.eventSink = EventChannel(watermarks: configuration.inboundWatermarks)
        #endif
        self.configuration = configuration
        self.request = configuration.transportRequest
        self.clock = ClockAdapter(clock)
        var system = SystemRandomNumberGenerator()
        let seed = randomSeed ?? system.next()
        self.machine = SessionMachine(configuration: configuration.session, random: SplitMix64(seed: seed))
        (self.sendsWaitingForOutbox, self.sendsWaitingSink) = AsyncStream.makeStream(
            bufferingPolicy: .bufferingNewest(1))
    }

    deinit {
        self.timer?.cancel()
        self.pathMonitor?.monitor.cancel()
        self.pathMonitor?.reader.cancel()
        for connection in self.connections.values {
            connection.close(code: 1001, reason: "")
        }
        self.eventSink.finish()
        self.sendsWaitingSink.finish()
    }

    // MARK: - User intent

    /// Starts connecting (or restarts after `stop()` or a non-retryable failure). Idempotent while running.
    public func start() {
        if !self.listensForRelease {
            self.listensForRelease = true
            // The consumer brought `events` back to the low watermark (on its own thread): read again.
            self.eventSink.onRelease { [weak self] in
                guard let self else { return }
                Task { await self.consumerCaughtUp() }
            }
        }
        if self.pathMonitor == nil, let monitor = self.configuration.pathMonitoring.makeMonitor() {
            self.monitorPath(with: monitor)
        }
        self.handle(self.machine.start(now: self.now()))
    }

    /// Makes a connection attempt at once — the user's "retry" — from `.waiting` (skipping the rest of the backoff),
    /// `.offline` or `.failed`, whatever the network path says: the path hint informs `state`, it never blocks a
    /// user's request (a monitor can be wrong). An attempt made while the path is unavailable that fails is not
    /// counted as a backoff attempt. Does nothing while connecting or open, when stopped (use `start()`), or in
    /// the background.
    public func reconnectNow() {
        self.handle(self.machine.reconnectRequested(now: self.now()))
    }

    /// Stops the session: closes the connection with 1000, cancels the retry timer, and returns once every
    /// connection has finished its closing handshake (bounded by the close timeout) and its reader has ended, and
    /// nothing of this client is writing any more.
    ///
    /// Every message waiting in the outbox is reported as `.outboxDropped(_, reason: .stopped)`, first first, and
    /// the outbox is empty when this returns. A queued message whose write was in flight is either written, or
    /// reported: `.stopped` when the write did not happen at all, `.writeInterrupted` when it broke midway. `.now`
    /// sends waiting behind the outbox throw `WebSocketSendError.notOpen` (nothing of them was sent). A greeting
    /// still being prepared is cancelled (`configuration.greeting` runs in a task that this waits for).
    public func stop() async {
        self.stopPathMonitor()
        self.handle(self.machine.stop(now: self.now()))  // drops the outbox; no connection for `send` any more
        for greeter in self.greeters.values {
            greeter.cancel()  // its connection is closing: there is nothing left to greet
        }
        let writers = Array(self.greeters.values) + (self.writer.map { [$0] } ?? [])
        for generation in Array(self.readers.keys) {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                if self.readers[generation] != nil {
                    self.readers[generation]?.append(continuation)
                } else {
                    continuation.resume()
                }
            }
        }
        for writer in writers {
            await writer.value  // a queued write that did not happen at all is dropped as `.stopped` by the machine
        }
        let waiters = self.runWaiters
        self.runWaiters.removeAll()
        for waiter in waiters {
            waiter.resume()
        }
    }

    /// Starts the client and suspends until it is stopped. Cancelling the calling task stops the client.
    public func run() async {
        self.start()
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                if self.machine.phase == .stopped {
                    continuation.resume()
                } else {
                    self.runWaiters.append(continuation)
                }
            }
        } onCancel: {
            Task { await self.stop() }
        }
    }

    /// Sends a message, now or through the outbox.
    ///
    /// `.now` (the default): on the open connection. Throws `WebSocketSendError.notOpen` when no connection is open
    /// (nothing is queued or dropped silently), `.messageTooLarge`, or `.connectionFailed` when the connection broke
    /// during the write. It never overtakes a queued message: on the wire come the greeting, then every message
    /// queued before the `.now` send, then the `.now` send. With nothing queued (the common case) it does not
    /// enter the actor: it writes to the connection that was current and open when the client last handled an
    /// event, so a send is never queued behind the handling of received messages. While queued messages are being
    /// written to the open connection (the session is open), it waits for them, its turn in the order the `.now`
    /// sends came, and returns once it is written after them; it throws `.notOpen`, nothing of it sent, if that
    /// connection ends first or `stop()` is called. Messages sent from one task keep their order.
    ///
    /// `.queued(expiresAfter:)`: appended to the outbox and returns; throws `.outboxFull` at once when the outbox
    /// is at `outboxLimits`, `.messageTooLarge` above `maximumMessageSize`. Queued messages are written in the
    /// order they were queued, across any number of reconnects, on an open connection after its greeting; one
    /// that waited longer than `expiresAfter` is reported as `.outboxDropped(_, reason: .expired)` when it expires
    /// (the client's timer wakes for the earliest expiry, up to `timerTolerance` late) and never sent. `stop()`
    /// reports every message still waiting as `.stopped` and empties the outbox (see `stop()`). The guarantee is
    /// at most once: a message whose write was interrupted by a failing connection may or may not have reached the
    /// peer, is reported as `.writeInterrupted` and not sent again; one whose write never started stays first in
    /// the outbox. A message handed to the kernel can still be lost with its connection: confirm at the
    /// application level what must arrive.
    ///
    /// `compression` applies when the connection negotiated permessage-deflate (`configuration.compression`):
    /// `.automatic` (the default) compresses a message of at least `CompressionOptions.threshold` bytes, `.always`
    /// compresses it whatever its size, `.never` sends it as it is (data already compressed, such as images). A
    /// queued message keeps its choice through the outbox and every reconnect. Without compression negotiated,
    /// every message goes as it is.
    public nonisolated func send(
        _ message: WebSocketMessage, policy: SendPolicy = .now, compression: MessageCompression = .automatic
    ) async throws(WebSocketSendError) {
        let outgoing = OutgoingMessage(message: message, compression: compression)
        switch policy {
        case .now:
            if let connection = self.sendRoute.withLock({ $0.direct }) {
                try await Self.write(outgoing, to: connection)  // nothing queued waits: straight to the connection
            } else {
                try await self.sendBehindOutbox(outgoing)
            }
        case .queued(let expiresAfter):
            try await self.enqueue(outgoing, expiresAfter: expiresAfter)
        }
    }

    /// Writes `outgoing` to `connection`, with the errors `send` documents.
    private nonisolated static func write(
        _ outgoing: OutgoingMessage, to connection: any TransportConnection
    ) async throws(WebSocketSendError) {
        do {
            try await connection.send(outgoing.message, compression: outgoing.compression)
        } catch let error as WebSocketSendError {
            throw error
        } catch {
            throw .connectionFailed  // a transport that throws something else: the write broke
        }
    }

    /// A `.now` send that found no direct route: the machine refuses it, sends it, or parks it behind the outbox
    /// until its turn (`.writeParkedSend`) or its refusal (`.parkedSendsRefused`). The machine's decision and the
    /// parked send's place in `parkedSends` are taken together, inside the continuation's body (which runs
    /// without a suspension point): no write the machine orders can find the machine's parked send missing here.
    private func sendBehindOutbox(_ message: OutgoingMessage) async throws(WebSocketSendError) {
        let turn = await withCheckedContinuation { (continuation: CheckedContinuation<SendTurn, Never>) in
            switch self.machine.nowSendArrived(now: self.now()) {
            case .refused:
                continuation.resume(returning: .refused)
            case .direct(let generation):
                continuation.resume(returning: .direct(generation: generation))
            case .parked(let count):
                self.parkedSends.append(ParkedSend(message: message, continuation: continuation))
                self.sendsWaitingSink.yield(count)
            }
        }
        switch turn {
        case .refused:
            throw .notOpen
        case .direct(let generation):
            guard let connection = self.connections[generation] else { throw .notOpen }
            try await Self.write(message, to: connection)
        case .written(let result):
            try result.get()
        }
    }

    private func enqueue(_ message: OutgoingMessage, expiresAfter: Duration?) throws(WebSocketSendError) {
        let size = message.message.byteCount
        guard size <= self.configuration.maximumMessageSize else {
            throw .messageTooLarge(size: size, limit: self.configuration.maximumMessageSize)
        }
        let decision = self.machine.messageQueued(
            bytes: size, expiresAfter: expiresAfter.map(\.milliseconds), now: self.now())
        switch decision {
        case .refused:
            self.afterEvent()  // expired messages may have left
            throw .outboxFull
        case .accepted(let ticket, let action):
            self.queued[ticket] = message
            self.handle(action)
        }
    }

    /// Writes `message` to the connection of `generation` (none: it closed before the write began) in a task, then
    /// hands the failure, if any, to `written` and reports the outcome to the machine.
    private func write(
        _ message: OutgoingMessage, generation: Int,
        then written: @escaping (isolated WebSocketClient, WebSocketSendError?) -> Void
    ) {
        let connection = self.connections[generation]
        self.writer = Task {
            var failure: WebSocketSendError? = .notOpen
            if let connection {
                do throws(WebSocketSendError) {
                    try await Self.write(message, to: connection)
                    failure = nil
                } catch {
                    failure = error
                }
            }
            written(self, failure)
            self.writer = nil
            self.handle(self.machine.writeFinished(
                generation: generation, result: WriteResult(failure), now: self.now()))
        }
    }

    /// Sends the greeting on `connection`, then tells the machine, which reports the session open.
    private func greet(
        _ connection: any TransportConnection, generation: Int,
        greeting: @Sendable () async -> [WebSocketMessage]
    ) async {
        defer { self.greeters[generation] = nil }
        for message in await greeting() {
            guard !Task.isCancelled else { return }  // stopped: the connection is closing
            do {
                try await connection.send(message)
            } catch {
                return self.handle(self.machine.greetingFailed(generation: generation, now: self.now()))
            }
        }
        self.handle(self.machine.greetingSent(generation: generation, now: self.now()))
    }

    /// Sends a text message. See `send(_:)`.
    public nonisolated func send(text: String) async throws(WebSocketSendError) {
        try await self.send(.text(text))
    }

    /// Sends a binary message. See `send(_:)`.
    public nonisolated func send(data: Data) async throws(WebSocketSendError) {
        try await self.send(.binary(data))
    }

    /// The executor on which this client handles its transport's events and its timer, if it has one of its own:
    /// on Linux, the configuration's event loop (which the default transport's sockets use too); nil elsewhere.
    ///
    /// A task that consumes `events` with this preference (`withTaskExecutorPreference(client.eventExecutor)`
    /// or `Task(executorPreference:)`) gets each event on the thread that read it from the socket, without waking
    /// a thread of the global pool: the lowest latency for request–response traffic. Code running there must not
    /// block, because it holds up every connection of the loop; hop elsewhere for heavy work.
    public nonisolated var eventExecutor: (any TaskExecutor)? {
        #if os(Linux)
        self.configuration.eventLoop
        #else
        nil
        #endif
    }

    /// The serial executor this client runs on, if it has one of its own that a transport may deliver on and a clock
    /// may time on: on Linux, the configuration's event loop; nil elsewhere (the default actor executor).
    private static func serialExecutor(_ configuration: Configuration) -> (any SerialExecutor)? {
        #if os(Linux)
        configuration.eventLoop
        #else
        nil
        #endif
    }

    #if os(Linux)
    /// On Linux the actor runs on the configuration's event loop, the thread that reads the default transport's
    /// sockets and fires the client's timer: both enter the actor with a direct call, without a task or a thread
    /// hop. Calls from other tasks hop onto the loop; `send` does not enter the actor at all.
    public nonisolated var unownedExecutor: UnownedSerialExecutor {
        self.configuration.eventLoop.asUnownedSerialExecutor()
    }
    #endif

    /// The current connection state.
    public var state: ConnectionState {
        self.machine.status
    }

    // MARK: - Lifecycle and path

    /// The app moved to the background.
    ///
    /// With `.closeInBackground` (the default) an open connection closes with 1001 (a connection attempt is
    /// abandoned), the session is suspended, and this returns once the close frame has been handed to the kernel
    /// or the platform (`TransportConnection.waitUntilCloseSent()`), or after `closeTimeout` at most: an app
    /// holds its background-task assertion until this returns, so the close goes out before suspension
    /// (`AppLifecycleBridge` does that). With `.keepAndProbe`, or when there is nothing to close, it returns at
    /// once. A repeated call does nothing.
    public func enterBackground() async {
        // The event goes to the machine inside the body, which can run after the actor has done other work (see
        // `waitUntilOutboxEmpty`). A close that reports when it is sent is waited for until the machine ends the
        // wait (`closeWaitEnded()`, published by `afterEvent`): the close was sent, or its deadline passed. The
        // waiter goes first: running the close may end the wait at once.
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let action = self.machine.enteredBackground(now: self.now())
            if case .closeTransport(_, _, _, reportSent: true) = action {
                self.closeWaiters.append(continuation)
            } else {
                continuation.resume()
            }
            self.handle(action)
        }
    }

    /// The app returned to the foreground: re-evaluate the path, then reuse (after a probe) or reconnect.
    public func enterForeground() {
        self.handle(self.machine.enteredForeground(now: self.now()))
    }

    /// Replaces the path monitor: bumps the hint generation (so the old monitor's late deliveries are stale),
    /// cancels the old monitor, then starts `monitor`, whose snapshots hop to this actor tagged with the new
    /// generation and are checked again there. The client cancels it on `stop()`.
    public func monitorPath(with monitor: any PathMonitor) {
        let generation = self.machine.restartPathMonitor()
        self.stopPathMonitor()
        // One stream per monitor keeps its snapshots in order; the reader tags them with the generation.
        let (updates, sink) = AsyncStream.makeStream(of: PathSnapshot.self, bufferingPolicy: .unbounded)
        // Isolated to this actor (it uses `self`), so the snapshots are handled on the actor's executor.
        let reader = Task {
            for await snapshot in updates {
                self.pathDelivered(snapshot, monitor: generation)
            }
        }
        self.pathMonitor = PathFeed(monitor: monitor, reader: reader)
        monitor.start { snapshot in
            sink.yield(snapshot)
        }
        self.afterEvent()
    }

    private func stopPathMonitor() {
        guard let current = self.pathMonitor else { return }
        current.monitor.cancel()
        current.reader.cancel()
        self.pathMonitor = nil
    }

    /// Feeds one path update by hand (for apps with their own monitor). It counts for the current monitor generation.
    public func updatePath(
        _ state: PathState, isExpensive: Bool = false, isConstrained: Bool = false, interfacesChanged: Bool = false
    ) {
        self.pathChanged(
            monitor: self.machine.hint.generation, state: state, expensive: isExpensive,
            constrained: isConstrained, interfacesChanged: interfacesChanged
        )
    }

    // MARK: - Inputs from transports, the timer and the path monitor

    private func transportEvent(_ event: TransportEvent, generation: Int) {
        let now = self.now()
        switch event {
        case .opened:
            self.handle(self.machine.transportOpened(generation: generation, now: now))
        case .message(let message):
            // The machine decides: everything the latest connection reads before its end is delivered, in any
            // phase (suspended with the connection kept, or closing); an older generation's leftovers are not.
            switch self.machine.messageReceived(generation: generation, bytes: message.byteCount, now: now) {
            case .deliver: self.publish(.message(message))
            case .discard: break  // stale: counted and recorded by the machine
            }
            self.afterEvent()
        case .pong(let id):
            self.handle(self.machine.pongReceived(generation: generation, ping: id, now: now))
        case .pingFailed(let id):
            self.handle(self.machine.pingFailed(generation: generation, ping: id, now: now))
        case .ended(let end):
            self.connections[generation] = nil
            self.handle(self.machine.transportEnded(generation: generation, end: end, now: now))
        }
    }

    /// Opens generation `generation`'s connection, whose events enter `transportEvent` on this actor, in order,
    /// tagged with the generation: by a direct call from the transport on this actor's executor when it offers that
    /// (`WebSocketTransport.connect(_:deliveringOn:_:)`), else from a task reading its `events`.
    private func connect(generation: Int) -> any TransportConnection {
        let transport = self.configuration.transport
        self.readers[generation] = []
        if let executor = Self.serialExecutor(self.configuration),
           let connection = transport.connect(self.request, deliveringOn: executor, { [self] event in
               self.assumeIsolated { client in
                   client.transportEvent(event, generation: generation)
                   if case .ended = event { client.readerFinished(generation) }
               }
           }) {
            return connection
        }
        let connection = transport.connect(self.request)
        // The task prefers the transport's executor, so that this actor's work runs where the event was read when
        // the two share it.
        Task(executorPreference: connection.preferredExecutor) {
            await self.read(connection, generation: generation)
        }
        return connection
    }

    /// Hands `connection`'s events to `transportEvent` until its `events` finish.
    private func read(_ connection: any TransportConnection, generation: Int) async {
        for await event in connection.events {
            self.transportEvent(event, generation: generation)
        }
        self.readerFinished(generation)
    }

    /// The connection of `generation` has nothing more to deliver.
    private func readerFinished(_ generation: Int) {
        let waiters = self.readers.removeValue(forKey: generation) ?? []
        self.connections[generation] = nil
        self.handle(self.machine.transportEventsFinished(generation: generation, now: self.now()))
        for waiter in waiters {
            waiter.resume()
        }
    }

    /// The armed wake time has come. (An arming replaced or cancelled before never fires: `WakeTimer`.)
    private func timerFired() {
        guard let wake = self.timerWake else { return }  // disarmed while its firing was on the way
        self.timer?.fired()
        self.timerWake = nil
        self.handle(self.machine.timerFired(now: max(self.now(), wake)))
    }

    private func pathDelivered(_ snapshot: PathSnapshot, monitor generation: Int) {
        let report = PathReport(
            state: snapshot.pathState, expensive: snapshot.isExpensive, constrained: snapshot.isConstrained,
            interfaces: snapshot.interfaces.map { "\($0)" } + snapshot.interfaceNames)
        self.handle(self.machine.pathReported(monitor: generation, report, now: self.now()))
    }

    private func pathChanged(
        monitor: Int, state: PathState, expensive: Bool, constrained: Bool, interfacesChanged: Bool
    ) {
        self.handle(self.machine.pathChanged(
            monitor: monitor, state: state, expensive: expensive, constrained: constrained,
            interfacesChanged: interfacesChanged, now: self.now()
        ))
    }

    // MARK: - Running actions

    private func handle(_ action: SessionAction) {
        self.run(action)
        self.afterEvent()
    }

    /// Every side effect of the machine happens here, on the connection the action names by its generation.
    private func run(_ action: SessionAction) {
        switch action {
        case .none:
            break
        case .openTransport(let generation, let held):
            precondition(generation == self.machine.generation, "the machine opens only its newest generation")
            let connection = self.connect(generation: generation)
            self.connections[generation] = connection
            if held { connection.holdReading(true) }
        case .sendPing(let generation, let ping):
            guard let connection = self.connections[generation] else { return }  // the machine names a live one
            connection.sendPing(id: ping)
        case .sendGreeting(let generation):
            guard let connection = self.connections[generation], let greeting = self.configuration.greeting else {
                return
            }
            self.greeters[generation] = Task {
                await self.greet(connection, generation: generation, greeting: greeting)
            }
        case .closeTransport(let generation, let reason, let code, let reportSent):
            // Looking the connection up by the action's generation is the barrier: a close for
            // generation 3 can never reach generation 4's connection.
            guard let connection = self.connections.removeValue(forKey: generation) else { return }
            self.publishSendRoute()  // senders leave it before its close frame goes: nothing is written after that
            connection.close(code: code, reason: reason.name)
            if reportSent {
                Task {
                    await connection.waitUntilCloseSent()
                    self.handle(self.machine.closeSent(generation: generation, now: self.now()))
                }
            }
        case .writeQueued(let generation, let ticket):
            guard let message = self.queued[ticket] else {
                preconditionFailure("the machine writes only messages it queued")
            }
            self.write(message, generation: generation) { client, failure in
                // Written: forget it. Otherwise the machine puts it back or drops it (a notice forgets it then).
                if failure == nil { client.queued[ticket] = nil }
            }
        case .writeParkedSend(let generation):
            guard !self.parkedSends.isEmpty else {
                preconditionFailure("the machine writes only sends it parked (route \(self.machine.sendRoute), "
                    + "\(self.machine.queuedCount) queued, \(self.machine.phase), generation \(generation))")
            }
            let send = self.parkedSends.removeFirst()
            self.write(send.message, generation: generation) { _, failure in
                send.continuation.resume(returning: .written(failure.map { .failure($0) } ?? .success(())))
            }
        case .holdReading(let held):
            for connection in self.connections.values {
                connection.holdReading(held)
            }
            if held {
                let waiters = self.readingHeldWaiters
                self.readingHeldWaiters.removeAll()
                for waiter in waiters { waiter.resume() }
            }
        }
    }

    /// Publishes the machine's records and state, and moves the timer to the machine's next wake time.
    private func afterEvent() {
        repeat {
            self.publishRecordsAndState()
        } while self.applyReadingHold()  // its record is published in the next round
        self.rescheduleTimer()
    }

    private func publishRecordsAndState() {
        // The send route first: a consumer that sees an `.opened` record may send at once, from another thread, and
        // must find the connection open (published after the records, such a send could throw `.notOpen`).
        self.publishSendRoute()
        self.machine.drainRecords { self.publish(.record($0)) }
        if let rtt = self.machine.roundTripToPublish() {
            self.publish(.roundTrip(milliseconds: rtt))
        }
        self.machine.drainOutboxNotices { notice in
            switch notice {
            case .dropped(let ticket, let reason):
                guard let message = self.queued.removeValue(forKey: ticket) else {
                    preconditionFailure("the machine drops only messages it queued")
                }
                self.publish(.outboxDropped(message.message, reason: reason))
            case .parkedSendsRefused(let count):
                let refused = self.parkedSends.prefix(count)
                self.parkedSends.removeFirst(count)
                for send in refused {
                    send.continuation.resume(returning: .written(.failure(.notOpen)))  // their connection is not open
                }
            }
        }
        if self.machine.queuedCount == 0, !self.outboxEmptyWaiters.isEmpty {
            let waiters = self.outboxEmptyWaiters
            self.outboxEmptyWaiters.removeAll()
            for waiter in waiters { waiter.resume() }
        }
        if self.machine.closeWaitEnded() {
            let waiters = self.closeWaiters
            self.closeWaiters.removeAll()
            for waiter in waiters { waiter.resume() }
        }
        if let change = self.machine.statusChange() {
            self.publish(.stateChanged(change.status, cause: change.cause))
        }
    }

    /// Hands `event` to `events`. When that put the events not read yet above the high watermark, reading is held
    /// once the records being published are out (`applyReadingHold`, from `afterEvent`).
    private func publish(_ event: WebSocketEvent) {
        if self.eventSink.yield(event) { self.readingHoldChanged = true }
    }

    /// The consumer brought `events` back to its low watermark.
    private func consumerCaughtUp() {
        self.readingHoldChanged = true
        self.afterEvent()
    }

    /// Tells the machine whether `events` is held, when that may have changed. Returns whether it changed (the
    /// machine then has a record to publish).
    private func applyReadingHold() -> Bool {
        guard self.readingHoldChanged else { return false }
        self.readingHoldChanged = false
        let action = self.machine.consumerBacklogChanged(held: self.eventSink.isHeld, now: self.now())
        self.run(action)
        return action != .none
    }

    /// Mirrors the machine's send route where `send` reads it without entering the actor (only when it changed:
    /// this runs after every event).
    private func publishSendRoute() {
        let decided = self.machine.sendRoute
        let connection: (any TransportConnection)? =
            if case .direct(let generation) = decided { self.connections[generation] } else { nil }
        let identity = connection.map { ObjectIdentifier($0) }
        guard decided != self.publishedRoute.route || identity != self.publishedRoute.connection else { return }
        self.publishedRoute = (decided, identity)
        let route: PublishedRoute =
            switch decided {
            case .closed: .closed
            case .direct: connection.map { .direct($0) } ?? .closed
            case .behindOutbox: .behindOutbox
            }
        self.sendRoute.withLock { $0 = route }
    }

    private func rescheduleTimer() {
        let wake = self.machine.nextWake
        guard wake != self.timerWake else { return }
        self.timerWake = wake
        guard let wake else {
            self.timer?.cancel()
            return
        }
        if self.timer == nil {
            self.timer = self.clock.makeTimer(executor: Self.serialExecutor(self.configuration), owner: self) {
                client in client.timerFired()
            }
        }
        self.timer?.arm(atMilliseconds: wake, tolerance: self.configuration.effectiveTimerTolerance)
    }

    private func now() -> Int {
        self.clock.now()
    }
}

/// The running path monitor and the task reading its snapshots.
private struct PathFeed {
    var monitor: any PathMonitor
    var reader: Task<Void, Never>
}

/// Where `send(_:policy: .now)` goes, as the client last published the machine's `sendRoute`.
private enum PublishedRoute {
    /// No open session: `.now` throws `notOpen`.
    case closed
    /// Open with nothing queued: `.now` writes directly, without entering the actor.
    case direct(any TransportConnection)
    /// Queued messages go first: `.now` enters the actor, whose machine parks it.
    case behindOutbox

    var direct: (any TransportConnection)? {
        if case .direct(let connection) = self { connection } else { nil }
    }
}

extension WriteResult {
    /// What the connection's answer to a write says happened: a fact for the machine, which decides what it means
    /// (`SessionMachine.writeFinished`). Every error is named, so that a new one must be placed here.
    fileprivate init(_ failure: WebSocketSendError?) {
        switch failure {
        case nil: self = .written
        case .notOpen?: self = .notOpen
        case .messageTooLarge?: self = .tooLarge
        case .connectionFailed?: self = .interrupted
        case .outboxFull?: self = .interrupted  // not a connection's answer: a transport that throws it broke
        }
    }
}

/// A message on its way: what `send` was given, with its compression choice.
private struct OutgoingMessage: Sendable {
    var message: WebSocketMessage
    var compression: MessageCompression
}

/// A `.now` send parked behind the outbox: resumed once written (or with its error), or refused with `notOpen`.
private struct ParkedSend {
    var message: OutgoingMessage
    var continuation: CheckedContinuation<SendTurn, Never>
}

/// What the machine made of a `.now` send that found no direct route.
private enum SendTurn {
    /// No open session: nothing sent.
    case refused
    /// The outbox was written meanwhile: write it to the connection of `generation`.
    case direct(generation: Int)
    /// Parked, then written (or refused) in its turn.
    case written(Result<Void, WebSocketSendError>)
}

extension WebSocketClient {
    /// Creates a client on the monotonic `ContinuousClock`.
    /// - Parameter randomSeed: seeds the backoff jitter; nil (the default) seeds from the system generator.
    /// - Throws: `WebSocketConfigurationError`, as `init(configuration:clock:randomSeed:)`.
    public init(configuration: Configuration, randomSeed: UInt64? = nil) throws(WebSocketConfigurationError) {
        try self.init(configuration: configuration, clock: ContinuousClock(), randomSeed: randomSeed)
    }
}

// MARK: - Test probes

/// What tests, benchmarks and the `tether` command observe of a client: package API, in one place.
extension WebSocketClient {
    /// Returns once `count` `.now` sends wait for the outbox (at the next one that starts waiting with at least
    /// `count` waiting), or when the calling task is cancelled. For tests that act while sends wait.
    package nonisolated func waitUntilSendsWaitForOutbox(_ count: Int) async {
        for await waiting in self.sendsWaitingForOutbox where waiting >= count {
            return
        }
    }

    /// Returns once no queued message waits (at once if none does): every one was written, dropped or reported.
    /// For tools (`tether connect --queue` at the end of its input) and tests.
    package func waitUntilOutboxEmpty() async {
        // The condition is read inside the body, not before the call: the body can run after the actor has done
        // other work (seen with Swift 6.3.1 on Linux: a write finishing and resuming the waiters in between, so
        // that a waiter appended afterwards waited for ever).
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            if self.machine.queuedCount == 0 {
                continuation.resume()
            } else {
                self.outboxEmptyWaiters.append(continuation)
            }
        }
    }

    /// The number of live connections, connections still being read, timers, path monitors and tasks writing (a
    /// greeting, the outbox); all zero once `stop()` has returned.
    package var resources: (connections: Int, readers: Int, timers: Int, pathMonitors: Int, writers: Int) {
        (
            self.connections.count, self.readers.count, self.timer?.isArmed == true ? 1 : 0,
            self.pathMonitor == nil ? 0 : 1, self.greeters.count + (self.writer == nil ? 0 : 1)
        )
    }

    /// How many events were ignored because their generation (connection or path monitor) was not current:
    /// late callbacks of a connection the client already left. A test that injects late callbacks (see
    /// `LateCallbackTransport`) can check that they arrived here and changed nothing else.
    package var staleEvents: Int { self.machine.staleEvents }

    /// The most the events not read yet have weighed (a message its payload plus the event's own size in the
    /// buffer, any other event that size): at most `inboundWatermarks.high` plus what arrived in the read that
    /// crossed it. For tests and benchmarks.
    package nonisolated var eventBufferPeakWeight: Int { self.eventSink.peakWeight }

    /// Milliseconds since the client was created, on the injected clock.
    package var currentTime: Int { self.now() }

    /// Runs `body` on the client, in one turn with nothing else, with the machine's next wake time (milliseconds
    /// since the client was created; nil when nothing is due) and the tolerance the client arms its timer with:
    /// a test reads what its clock's timer was armed with inside `body` and compares.
    package func inspectTimer<Result: Sendable>(
        _ body: @Sendable (_ nextWake: Int?, _ tolerance: Duration) -> Result
    ) -> Result {
        body(self.machine.nextWake, self.configuration.effectiveTimerTolerance)
    }

    /// Returns once the client holds reading because its consumer fell behind (at once if it does now). For tests
    /// and benchmarks that check the inbound bound on an explicit signal instead of a sleep.
    package func waitUntilReadingHeld() async {
        // The condition is read inside the body (see `waitUntilOutboxEmpty`).
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            if self.machine.readingHeld {
                continuation.resume()
            } else {
                self.readingHeldWaiters.append(continuation)
            }
        }
    }
}

extension WebSocketMessage {
    /// The payload size in bytes (UTF-8 for text).
    public var byteCount: Int {
        switch self {
        case .text(let text): text.utf8.count
        case .binary(let data): data.count
        }
    }
}
