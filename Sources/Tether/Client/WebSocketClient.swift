import Foundation
import TetherCore
import TetherWire

/// A WebSocket client that keeps one logical session alive over many connections.
///
/// The client owns a pure `SessionMachine`. Every input — the user's calls, transport callbacks,
/// the timer and path updates — enters this actor, is turned into one machine event, and the
/// machine's action is run by `run(_:)` on the connection the action names by its generation. One timer
/// sleeps until the machine's next wake time; nothing polls.
///
/// A started client keeps running until `stop()`, the cancellation of `run()`, or until nothing outside it holds
/// it any more: nothing inside it (its connections, timer, path monitor, tasks, nor the readers of `events` and
/// `states`) keeps it alive, and a client that is dropped without `stop()` closes its connections with 1001 and
/// releases everything it holds (docs/client.md "A client that is dropped").
///
/// ```swift
/// let configuration = WebSocketConfiguration(url: URL(string: "wss://example.com/feed")!)
/// let client = try WebSocketClient(configuration: configuration)
/// await client.start()
/// try await client.waitUntilOpen(timeout: .seconds(10))
/// for await event in client.events { ... }
/// ```
public actor WebSocketClient {
    /// Everything the client reports, in order: one stream with backpressure, read by one reader at a time. A
    /// cancelled reader detaches (the events wait for the next one, within `inboundWatermarks`); a new iterator
    /// takes over from the previous one, which ends. It finishes when the client is deinitialized. See
    /// `WebSocketEvents`.
    public nonisolated var events: WebSocketEvents { WebSocketEvents(channel: self.eventSink) }

    /// The connection state, starting with the current one, then each change, for any number of observers at once;
    /// a slow observer skips to the latest. See `WebSocketStates`; for SwiftUI, `ObservableConnectionState`.
    public nonisolated var states: WebSocketStates { WebSocketStates(broadcast: self.stateBroadcast) }

    nonisolated let eventSink: EventChannel
    /// The latest published state and the observers of `states`.
    nonisolated let stateBroadcast: StateBroadcast
    let configuration: Configuration
    /// The request of every attempt: the configuration's, or with a request provider, its URL and headers the
    /// provider's.
    let request: TransportRequest
    /// The injected clock (tests pass a manual one), read in milliseconds since the client was created.
    let clock: any ClientClock
    var machine: SessionMachine

    /// Live connections and the readers of their events, by generation.
    var connections = ConnectionTable()
    /// The one timer, at the machine's next wake: the clock's own timer on this actor's executor when it offers one
    /// (the continuous clock on Linux), else a task sleeping on the clock.
    private(set) var timer = MachineTimer()
    /// The running path monitor, if any.
    var pathMonitor: PathFeed?
    /// Where a `.now` send goes, as the machine last decided it: read by `send` without entering the actor.
    nonisolated let sendRoute = SendRouteMirror()
    /// The machine's route and the identity of the connection `sendRoute` holds, as last published, with the
    /// connection table's version then: compared here after every event, so that the mirror's lock is taken only
    /// when they change, and the connection is looked up only when the route or the table changed.
    private var publishedRoute: (route: SendRoute, connection: ObjectIdentifier?, table: Int) = (.closed, nil, -1)
    /// The payloads of the machine's outbox, by ticket, and the `.now` sends it parked, in order.
    var payloads = OutboxPayloads()
    /// What was written to each connection since its last pong, to report it should the connection be lost.
    nonisolated let unconfirmed: UnconfirmedRecord
    /// The task running the write the machine ordered, if one is in flight.
    var writer: Task<Void, Never>?
    /// The queued message that `writer` is writing, by its connection's generation and its ticket.
    var writingQueued: (generation: Int, ticket: Int)?
    /// The tasks sending each connection's greeting, by generation, until they finish.
    var greeters: [Int: Task<Void, Never>] = [:]
    /// The tasks asking the request provider for each attempt's request, by generation, until it is made or the
    /// attempt is closed.
    var requesters: [Int: Task<Void, Never>] = [:]
    /// Runs `configuration.logSink`, if any: the records go to it as they are published.
    private let logSink: LogSinkDelivery?
    /// `events` may have been held or released since `applyReadingHold` last looked.
    private var readingHoldChanged = false
    /// Whether `events` tells this client when its hold changes off its executor (set once, on the first start).
    private var listensForHoldChanges = false

    /// Callers of `run()`, of `waitUntilReadingHeld()`, of `enterBackground()` waiting for the machine's close wait
    /// to end, and of `waitUntilOutboxEmpty()`.
    private var runWaiters = Waiters()
    var readingHeldWaiters = Waiters()
    var closeWaiters = Waiters()
    var outboxEmptyWaiters = Waiters()
    /// How many `.now` sends wait for the outbox, each time one starts waiting (the latest only): for tests.
    nonisolated let sendsWaitingForOutbox: AsyncStream<Int>
    nonisolated let sendsWaitingSink: AsyncStream<Int>.Continuation

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
        self.unconfirmed = UnconfirmedRecord(limits: configuration.unconfirmedLimits)
        self.request = configuration.transportRequest
        self.logSink = configuration.logSink.map(LogSinkDelivery.init)
        let adapter = clientClock(for: clock)
        self.clock = adapter
        var system = SystemRandomNumberGenerator()
        let seed = randomSeed ?? system.next()
        let machine = SessionMachine(configuration: configuration.machineSession, random: SplitMix64(seed: seed))
        self.machine = machine
        self.stateBroadcast = StateBroadcast(ConnectionState(machine.status, origin: adapter.continuousOrigin))
        (self.sendsWaitingForOutbox, self.sendsWaitingSink) = AsyncStream.makeStream(
            bufferingPolicy: .bufferingNewest(1))
    }

    /// Dropped without `stop()`: nothing inside the client held it (its connections and timer call it through weak
    /// references, its tasks hold it only while they run an event). Its connections close with 1001 ("going away")
    /// and end on their own within the close timeout; its timer and path monitor stop; a greeting being prepared is
    /// cancelled; what waits in the outbox is reported as `stop()` reports it, and what was written since the last
    /// pong (a queued write in flight included) as `.unconfirmed`; the readers of `events` and `states` get what they
    /// had not read yet, then the end.
    deinit {
        // The session ends here as with `stop()`: every message waiting in the outbox was accepted and will never be
        // written, and is reported so (`.stopped`, or `.expired`), first first, before the events end. The machine's
        // action (closing the connection with 1000) is not run: the connections close with 1001 below. A queued
        // write in flight is not in the outbox; it ends with its connection.
        _ = self.machine.stop(now: self.clock.now())
        var dropped: [(ticket: Int, reason: OutboxDropReason)] = []
        self.machine.drainOutboxNotices { notice in
            if case .dropped(let ticket, let reason) = notice { dropped.append((ticket, reason)) }
        }
        for (ticket, reason) in dropped {
            self.eventSink.yield(.outboxDropped(self.payloads.dropped(ticket), reason: reason))
        }
        // The connections close with 1001 below, and whether the server answers can no longer be heard: what was
        // written to them since their last pong is reported as a loss would report it, with a queued write still in
        // flight (it may or may not go out).
        var inFlight: (message: WebSocketMessage, generation: Int)?
        if let writing = self.writingQueued {
            inFlight = (self.payloads.message(writing.ticket).message, writing.generation)
        }
        for report in self.unconfirmed.lostAll(inFlight: inFlight) {
            self.eventSink.yield(.unconfirmed(report))
        }
        self.timer.cancel()
        self.pathMonitor?.monitor.cancel()
        self.pathMonitor?.reader.cancel()
        for task in Array(self.greeters.values) + Array(self.requesters.values) {
            task.cancel()
        }
        for connection in self.connections.all {
            connection.close(code: 1001, reason: "")
        }
        self.eventSink.finish()
        self.logSink?.finish()
        self.stateBroadcast.finish()
        self.sendsWaitingSink.finish()
    }

    // MARK: - User intent

    /// Starts connecting (or restarts after `stop()` or a non-retryable failure). Idempotent while running.
    public func start() {
        if !self.listensForHoldChanges {
            self.listensForHoldChanges = true
            // The consumer brought `events` back to the low watermark (on its own thread): read again; or, rarely, a
            // reader that left put them above the high one: hold.
            self.eventSink.onHoldChange { [weak self] in
                Task { await self?.eventsHoldChanged() }
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
    /// still being prepared is cancelled (`configuration.greeting` runs in a task that this waits for). An acknowledged
    /// send waiting to be written is given up (`.delivery(.gaveUp(…, reason: .stopped))`); one written and waiting for
    /// its acknowledgement is given up so at its connection's end, unless the closing handshake brought it.
    public func stop() async {
        self.stopPathMonitor()
        self.handle(self.machine.stop(now: self.now()))  // drops the outbox; no connection for `send` any more
        for greeter in self.greeters.values {
            greeter.cancel()  // its connection is closing: there is nothing left to greet
        }
        let writers = Array(self.greeters.values) + (self.writer.map { [$0] } ?? [])
        for generation in self.connections.readingGenerations {
            await withCheckedContinuation { self.connections.waitForReading(generation, $0) }
        }
        for writer in writers {
            await writer.value  // a queued write that did not happen at all is dropped as `.stopped` by the machine
        }
        self.runWaiters.resumeAll()
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

    /// The executor on which this client handles its transport's events and its timer, if it has one of its own:
    /// on Linux, the configuration's event loop (which the default transport's sockets use too); nil elsewhere.
    ///
    /// A task that consumes `events` with this preference (`withTaskExecutorPreference(client.eventExecutor)`
    /// or `Task(executorPreference:)`) gets each event on the thread that read it from the socket, without waking
    /// a thread of the global pool: the lowest latency for request–response traffic. Code running there must not
    /// block, because it holds up every connection of the loop; hop elsewhere for heavy work.
    public nonisolated var eventExecutor: (any TaskExecutor)? {
        #if os(Linux)
        self.configuration.eventLoop.taskExecutor
        #else
        nil
        #endif
    }

    /// The serial executor this client runs on, if it has one of its own that a transport may deliver on and a clock
    /// may time on: on Linux, the configuration's event loop; nil elsewhere (the default actor executor).
    static func serialExecutor(_ configuration: Configuration) -> (any SerialExecutor)? {
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

    /// The current connection state. To follow it from several places at once, iterate `states` (or use
    /// `ObservableConnectionState`).
    public var state: ConnectionState {
        self.connectionState(self.machine.status)
    }

    /// The state the app sees for the machine's `status`: its times as instants, and while open what the handshake
    /// of the session's connection agreed.
    private func connectionState(_ status: SessionStatus) -> ConnectionState {
        let handshake = status.phase == .open ? self.connections.handshake(of: status.generation) : nil
        return ConnectionState(status, origin: self.clock.continuousOrigin, handshake: handshake)
    }

    // MARK: - Lifecycle

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

    // MARK: - Inputs from transports, the timer and the path monitor

    func transportEvent(_ event: TransportEvent, generation: Int) {
        let now = self.now()
        switch event {
        case .redirected(let status, let url):
            self.machine.transportRedirected(
                generation: generation, status: status, location: url.redactedForLogs, now: now)
            self.afterEvent()
        case .opened(let handshake):
            self.reportTimings(of: generation, now: now)
            self.connections.opened(generation, handshake)
            self.handle(self.machine.transportOpened(generation: generation, now: now))
        case .message(let message):
            // The machine decides: everything the latest connection reads before its end is delivered, in any
            // phase (suspended with the connection kept, or closing); an older generation's leftovers are not.
            switch self.delivery(of: message, generation: generation, now: now) {
            case .deliver: self.publish(.message(message, generation: generation))
            case .discard: break  // stale: counted and recorded by the machine
            }
            self.afterEvent()
        case .pong(let id):
            self.handle(self.withMachine { machine in
                // Overdue: the machine hears first what the connection received, as at the deadline's firing, so
                // that the pong is judged by when its bytes came, whichever of the two is handled first.
                self.reportInboundProgress(to: &machine, now: now)
                return machine.pongReceived(generation: generation, ping: id, now: now)
            })
        case .pingFailed(let id):
            self.handle(self.machine.pingFailed(generation: generation, ping: id, now: now))
        case .ended(let end):
            self.reportTimings(of: generation, now: now)
            self.connections.remove(generation)
            self.handle(self.machine.transportEnded(generation: generation, end: end, now: now))
        }
    }

    /// Opens generation `generation`'s connection, whose events enter `transportEvent` on this actor, in order,
    /// tagged with the generation: by a direct call from the transport on this actor's executor when it offers that
    /// (`WebSocketTransport.connect(_:deliveringOn:_:)`), else from a task reading its `events`.
    ///
    /// The connection reaches the client through a weak reference: a connection, which lives until its end, never
    /// keeps the client alive (a client dropped without `stop()` closes it with 1001 from its `deinit`).
    func connect(generation: Int, request: TransportRequest) -> any TransportConnection {
        let transport = self.configuration.transport
        if let executor = Self.serialExecutor(self.configuration),
           let connection = transport.connect(request, deliveringOn: executor, { [weak self] event in
               self?.assumeIsolated { client in
                   client.transportEvent(event, generation: generation)
                   if case .ended = event { client.readerFinished(generation) }
               }
           }) {
            return connection
        }
        let connection = transport.connect(request)
        // The task prefers the transport's executor, so that this actor's work runs where the event was read when
        // the two share it. It holds the client only while it hands an event over.
        Task(executorPreference: connection.preferredExecutor) { [weak self] in
            for await event in connection.events {
                guard let self else { return }  // the client is gone: it closed this connection
                await self.transportEvent(event, generation: generation)
            }
            await self?.readerFinished(generation)
        }
        return connection
    }

    /// The connection of `generation` has nothing more to deliver.
    func readerFinished(_ generation: Int) {
        self.unconfirmed.forget(generation: generation)  // reported already if it was lost
        var waiters = self.connections.readingFinished(generation)
        self.handle(self.machine.transportEventsFinished(generation: generation, now: self.now()))
        waiters.resumeAll()
    }

    /// The close frame of `generation`'s connection went out (`closeTransport`'s `reportSent`).
    private func closeFrameSent(generation: Int) {
        self.handle(self.machine.closeSent(generation: generation, now: self.now()))
    }

    /// The armed wake time has come. When a pong is overdue the machine hears first what its connection has
    /// received (a frame still arriving may explain the delay); at any other wake nothing is asked.
    private func timerFired() {
        guard let wake = self.timer.fired() else { return }  // disarmed while its firing was on the way
        let now = max(self.now(), wake)
        // One access to the machine for the three questions (each access is checked at run time).
        let action = self.withMachine { machine in
            self.reportInboundProgress(to: &machine, now: now)
            if let generation = machine.attemptTimingsWanted(now: now),
               let timings = self.connections[generation]?.attemptTimings() {
                machine.attemptTimed(generation: generation, timings, now: now)
            }
            return machine.timerFired(now: now)
        }
        self.handle(action)
    }

    /// Hands the machine the timings of `generation`'s attempt, if its transport measures them (the machine keeps
    /// them only while that attempt is connecting).
    private func reportTimings(of generation: Int, now: Int) {
        guard let timings = self.connections[generation]?.attemptTimings() else { return }
        self.machine.attemptTimed(generation: generation, timings, now: now)
    }

    // MARK: - Running actions

    func handle(_ action: SessionAction) {
        self.run(action)
        while let next = self.machine.followUp() {
            self.run(next)  // a handover's second action: two transports to close, or one to close and one to probe
        }
        self.afterEvent()
    }

    /// Every side effect of the machine happens here, on the connection the action names by its generation.
    private func run(_ action: SessionAction) {
        switch action {
        case .none:
            break
        case .openTransport(let generation, let held):
            self.unconfirmed.opened(generation: generation)
            self.connections.startReading(generation)  // before the connection exists: it may deliver at once
            if let provider = self.configuration.requestProvider {
                self.askForRequest(generation: generation, provider: provider)  // the connection follows it
                return
            }
            let connection = self.connect(generation: generation, request: self.request)
            self.connections.add(connection, generation: generation)
            if held { connection.holdReading(true) }
        case .sendPing(let generation, let ping):
            guard let connection = self.connections[generation] else { return }  // the machine names a live one
            self.unconfirmed.pingSent(ping, generation: generation)  // before the ping: its pong proves what came first
            connection.sendPing(id: ping)
        case .sendGreeting(let generation):
            guard let connection = self.connections[generation], let greeting = self.greetingMessages else {
                return
            }
            self.greet(connection, generation: generation, greeting: greeting)
        case .closeTransport(let generation, let reason, let code, let reportSent):
            // Looking the connection up by the action's generation is the barrier: a close for
            // generation 3 can never reach generation 4's connection.
            guard let connection = self.connections.remove(generation) else {
                self.abandonRequest(generation: generation)  // closed while its request was being made
                return
            }
            self.publishSendRoute()  // senders leave it before its close frame goes: nothing is written after that
            connection.close(code: code, reason: reason.name)
            if reportSent {
                Task { [weak self] in
                    await connection.waitUntilCloseSent()
                    await self?.closeFrameSent(generation: generation)
                }
            }
        case .writeQueued(let generation, let ticket):
            self.writingQueued = (generation, ticket)
            self.write(self.payloads.message(ticket), generation: generation) { client, failure in
                client.writingQueued = nil
                // Written: forget it. Otherwise the machine puts it back or drops it (a notice forgets it then).
                if failure == nil { client.payloads.written(ticket) }
            }
        case .writeParkedSend(let generation):
            guard let send = self.payloads.nextParked() else {
                preconditionFailure("the machine writes only sends it parked (route \(self.machine.sendRoute), "
                    + "\(self.machine.queuedCount) queued, \(self.machine.phase), generation \(generation))")
            }
            self.write(send.message, generation: generation) { _, failure in
                send.continuation.resume(returning: .written(failure.map { .failure($0) } ?? .success(())))
            }
        case .holdReading(let held):
            for connection in self.connections.all {
                connection.holdReading(held)
            }
            if held { self.readingHeldWaiters.resumeAll() }
        }
    }

    /// Publishes the machine's records and state, and moves the timer to the machine's next wake time.
    func afterEvent() {
        repeat {
            self.publishRecordsAndState()
        } while self.applyReadingHold()  // its record is published in the next round
        self.rescheduleTimer()
    }

    private func publishRecordsAndState() {
        // One access to the machine for all it has to publish: each access to the actor's stored properties is
        // checked for exclusivity at run time, and this runs after every event. Nothing here touches `machine`
        // but through `machine`.
        self.withMachine { machine in
            self.publishRecordsAndState(&machine)
        }
    }

    /// When a pong is overdue at `now`, tells the machine what its connection has received (a frame still arriving,
    /// a pong decoded and on its way); nothing otherwise, which is every time but at a deadline.
    private func reportInboundProgress(to machine: inout SessionMachine, now: Int) {
        if let generation = machine.inboundProgressWanted(now: now),
           let progress = self.connections[generation]?.inboundProgress() {
            machine.inboundProgressReported(generation: generation, progress, now: now)
        }
    }

    private func withMachine<Result>(_ body: (inout SessionMachine) -> Result) -> Result {
        body(&self.machine)
    }

    private func publishRecordsAndState(_ machine: inout SessionMachine) {
        // The send route first: a consumer that sees an `.opened` record may send at once, from another thread, and
        // must find the connection open (published after the records, such a send could throw `.notOpen`).
        self.publishSendRoute(machine.sendRoute)
        machine.drainRecords { record in
            guard let logSink = self.logSink else {
                return self.publish(.record(record))  // moved into the event
            }
            self.publish(.record(copy record))
            logSink.deliver(record)
        }
        if let rtt = machine.roundTripToPublish() {
            self.publish(.roundTrip(milliseconds: rtt))
        }
        machine.drainOutboxNotices { notice in
            switch notice {
            case .dropped(let ticket, let reason):
                self.publish(.outboxDropped(self.payloads.dropped(ticket), reason: reason))
            case .parkedSendsRefused(let count):
                self.payloads.refuseParked(count)
            case .provedAlive(let generation, let ping):
                self.unconfirmed.confirmed(generation: generation, ping: ping)
            case .connectionLost(let generation):
                if let unconfirmed = self.unconfirmed.lost(generation: generation) {
                    self.publish(.unconfirmed(unconfirmed))
                }
            }
        }
        self.publishDeliveryNotices(&machine)
        if machine.queuedCount == 0 { self.outboxEmptyWaiters.resumeAll() }
        if machine.closeWaitEnded() { self.closeWaiters.resumeAll() }
        if let change = machine.statusChange() {
            let state = self.connectionState(change.status)
            self.publish(.stateChanged(state, cause: change.cause))
            self.stateBroadcast.publish(state)
        }
    }

    /// Hands `event` to `events`. When that put the events not read yet above the high watermark, reading is held
    /// once the records being published are out (`applyReadingHold`, from `afterEvent`).
    func publish(_ event: consuming WebSocketEvent) {
        if self.eventSink.yield(event) { self.readingHoldChanged = true }
    }

    /// `events` changed its hold off the client's executor (`EventChannel.onHoldChange`).
    private func eventsHoldChanged() {
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

    /// Mirrors the machine's send route where `send` reads it without entering the actor (the lock only when it
    /// changed: this runs after every event).
    private func publishSendRoute() {
        self.publishSendRoute(self.machine.sendRoute)
    }

    private func publishSendRoute(_ decided: SendRoute) {
        let table = self.connections.version
        guard decided != self.publishedRoute.route || table != self.publishedRoute.table else { return }
        let connection: (any TransportConnection)? =
            if case .direct(let generation) = decided { self.connections[generation] } else { nil }
        let identity = connection.map { ObjectIdentifier($0) }
        let changed = decided != self.publishedRoute.route || identity != self.publishedRoute.connection
        self.publishedRoute = (decided, identity, table)
        if changed { self.sendRoute.publish(decided, connection: connection) }
    }

    private func rescheduleTimer() {
        self.timer.move(to: self.machine.nextWake) {
            self.clock.makeTimer(
                executor: Self.serialExecutor(self.configuration), owner: self,
                tolerance: self.configuration.effectiveTimerTolerance
            ) { client in
                client.timerFired()
            }
        }
    }

    func now() -> Int {
        self.clock.now()
    }
}

extension WebSocketClient {
    /// Creates a client on the monotonic `ContinuousClock`.
    /// - Parameter randomSeed: seeds the backoff jitter; nil (the default) seeds from the system generator.
    /// - Throws: `WebSocketConfigurationError`, as `init(configuration:clock:randomSeed:)`.
    public init(configuration: Configuration, randomSeed: UInt64? = nil) throws(WebSocketConfigurationError) {
        try self.init(configuration: configuration, clock: ContinuousClock(), randomSeed: randomSeed)
    }
}

