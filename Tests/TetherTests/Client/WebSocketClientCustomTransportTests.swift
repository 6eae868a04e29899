#if os(Linux)
import Foundation
import Synchronization
import Testing
import TetherCore
import TetherPOSIX
import TetherTesting
@testable import Tether

/// Transports and clocks the client was not written for: one that only offers its `events` stream, one that
/// delivers directly on the client's executor, a clock that times on that executor and one that declines to. Each
/// runs a session (open, an echo, heartbeats, stop) with no change to the client.
@Suite struct WebSocketClientCustomTransportTests {
    func makeClient<ClockType: Clock>(
        _ transport: any WebSocketTransport, clock: ClockType
    ) throws -> (WebSocketClient, EventRecorder) where ClockType.Duration == Duration {
        let configuration = WebSocketConfiguration(
            url: URL(string: "ws://echo.invalid/")!,
            heartbeatInterval: .milliseconds(20),
            heartbeatTimeout: .seconds(5),
            transport: transport
        )
        let client = try WebSocketClient(configuration: configuration, clock: clock)
        return (client, EventRecorder(client.events))
    }

    /// Opens, echoes a message, sees two pongs (the timer fired twice), then stops with nothing left behind.
    func runSession(_ client: WebSocketClient, _ probe: EventRecorder) async throws {
        await client.start()
        #expect(await probe.state(.open) != nil)
        try await client.send(text: "hello")
        #expect(await probe.message() == .text("hello"))
        #expect(await probe.record(.pong) != nil)
        #expect(await probe.record(.pong) != nil)
        await client.stop()
        let resources = await client.resources
        #expect(resources.connections == 0 && resources.readers == 0 && resources.timers == 0)
        #expect(await client.state.phase == .stopped)
    }

    @Test func aTransportWithOnlyAStreamIsReadThroughIt() async throws {
        let transport = EchoTransport(direct: false)
        let (client, probe) = try self.makeClient(transport, clock: ContinuousClock())
        try await self.runSession(client, probe)
        #expect(transport.counts == .init(streamed: 1, direct: 0, declined: 1))
    }

    @Test func aTransportThatDeliversOnTheClientsLoopIsNeverReadThroughItsStream() async throws {
        let transport = EchoTransport(direct: true)
        let (client, probe) = try self.makeClient(transport, clock: ContinuousClock())
        try await self.runSession(client, probe)
        #expect(transport.counts == .init(streamed: 0, direct: 1, declined: 0))
        #expect(transport.deliveredOffTheLoop == 0)
    }

    @Test func aClockThatTimesOnTheClientsLoopArmsEveryWakeUp() async throws {
        let clock = CountingClock(offersTimers: true)
        let (client, probe) = try self.makeClient(EchoTransport(direct: true), clock: clock)
        try await self.runSession(client, probe)
        #expect(clock.armed >= 2)
        #expect(clock.sleeps == 0, "no task sleeps on a clock that times on the loop")
        #expect(clock.firedOffTheLoop == 0)
    }

    /// Each time the machine's next wake moves (the open, every ping, every pong), the clock's timer is armed at
    /// exactly that instant, with the configured tolerance: not earlier (a wasted wake-up), not later.
    @Test func theTimerIsArmedExactlyAtTheMachinesNextWake() async throws {
        let clock = CountingClock(offersTimers: true)
        let (client, probe) = try self.makeClient(EchoTransport(direct: true), clock: clock)
        await client.start()
        #expect(await probe.state(.open) != nil)
        for _ in 0..<3 {
            #expect(await probe.record(.pong) != nil)
            let (wake, tolerance, armed) = await client.inspectTimer { wake, tolerance in
                (wake, tolerance, clock.lastArming)  // in one turn of the client: nothing re-arms in between
            }
            let origin = try #require(clock.firstReading, "the client reads its clock when it is made")
            let due = try #require(wake, "a heartbeating client always has a wake time")
            let arming = try #require(armed)
            #expect(arming.deadline == origin.advanced(by: .milliseconds(due)))
            #expect(arming.tolerance == tolerance && tolerance == .microseconds(200))  // 1 % of the 20 ms interval
        }
        await client.stop()
        #expect(await client.resources.timers == 0)
    }

    @Test func aClockThatDeclinesIsSleptOnInATask() async throws {
        let clock = CountingClock(offersTimers: false)
        let (client, probe) = try self.makeClient(EchoTransport(direct: false), clock: clock)
        try await self.runSession(client, probe)
        #expect(clock.armed == 0, "declined: no timer of its own")
        #expect(clock.sleeps >= 2)
    }
}

/// A transport whose connections open at once, echo every message, answer every ping and end when closed. With
/// `direct`, it delivers on the executor it is given when that is an event loop; otherwise through `events`.
private final class EchoTransport: WebSocketTransport {
    struct Counts: Equatable {
        var streamed = 0
        var direct = 0
        var declined = 0
    }

    private let direct: Bool
    private let state = Mutex((counts: Counts(), offLoop: 0))

    init(direct: Bool) {
        self.direct = direct
    }

    var counts: Counts { self.state.withLock { $0.counts } }
    var deliveredOffTheLoop: Int { self.state.withLock { $0.offLoop } }

    func connect(_ request: TransportRequest) -> any TransportConnection {
        self.state.withLock { $0.counts.streamed += 1 }
        let (events, sink) = AsyncStream.makeStream(of: TransportEvent.self)
        return EchoConnection(events: events) { event in
            sink.yield(event)
            if case .ended = event { sink.finish() }
        }
    }

    func connect(
        _ request: TransportRequest, deliveringOn executor: any SerialExecutor,
        _ handler: @escaping @Sendable (TransportEvent) -> Void
    ) -> (any TransportConnection)? {
        guard self.direct, let loop = executor as? EventLoop else {
            self.state.withLock { $0.counts.declined += 1 }
            return nil
        }
        self.state.withLock { $0.counts.direct += 1 }
        let (events, sink) = AsyncStream.makeStream(of: TransportEvent.self)
        sink.finish()  // delivering directly: the stream only finishes
        return EchoConnection(events: events) { [self] event in
            // A later turn of the loop, never inside the client's call into the connection.
            _ = loop.execute {
                if !loop.inEventLoop { self.state.withLock { $0.offLoop += 1 } }
                handler(event)
            }
        }
    }
}

private final class EchoConnection: TransportConnection {
    let events: AsyncStream<TransportEvent>
    private let deliver: @Sendable (TransportEvent) -> Void
    private let ended = Mutex(false)

    init(events: AsyncStream<TransportEvent>, deliver: @escaping @Sendable (TransportEvent) -> Void) {
        self.events = events
        self.deliver = deliver
        self.emit(.opened(subprotocol: nil))
    }

    /// Delivers `event` unless the connection ended; under the lock, so that the order holds.
    private func emit(_ event: TransportEvent) {
        self.ended.withLock { ended in
            guard !ended else { return }
            if case .ended = event { ended = true }
            self.deliver(event)
        }
    }

    nonisolated(nonsending) func send(_ message: WebSocketMessage) async throws {
        guard !self.ended.withLock({ $0 }) else { throw WebSocketSendError.notOpen }
        self.emit(.message(message))
    }

    func sendPing(id: UInt64) {
        self.emit(.pong(id: id))
    }

    func close(code: UInt16, reason: String) {
        self.emit(.ended(.closedLocally))
    }

    func waitUntilCloseSent() async {}
}

/// The continuous clock, counting the client's wake-ups: armed on the executor's loop through the continuous
/// clock's own timer when `offersTimers`, else declined, so that the client sleeps on it in a task.
private final class CountingClock: ExecutorTimerClock {
    typealias Instant = ContinuousClock.Instant

    private let offersTimers: Bool
    private let state = Mutex(
        (armed: 0, sleeps: 0, offLoop: 0, first: Optional<Instant>.none,
         last: Optional<(deadline: Instant, tolerance: Duration)>.none))

    init(offersTimers: Bool) {
        self.offersTimers = offersTimers
    }

    var armed: Int { self.state.withLock { $0.armed } }
    var sleeps: Int { self.state.withLock { $0.sleeps } }
    var firedOffTheLoop: Int { self.state.withLock { $0.offLoop } }
    /// The clock's first reading: the client's origin, from which it counts its milliseconds.
    var firstReading: Instant? { self.state.withLock { $0.first } }
    /// The deadline and tolerance of the latest arming.
    var lastArming: (deadline: Instant, tolerance: Duration)? { self.state.withLock { $0.last } }

    var now: Instant {
        let now = ContinuousClock.now
        self.state.withLock { state in
            if state.first == nil { state.first = now }
        }
        return now
    }
    var minimumResolution: Duration { ContinuousClock().minimumResolution }

    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        self.state.withLock { $0.sleeps += 1 }
        try await ContinuousClock().sleep(until: deadline, tolerance: tolerance)
    }

    func makeTimer(
        on executor: any SerialExecutor, _ fire: @escaping @Sendable () -> Void
    ) -> (any ExecutorTimer<Instant>)? {
        guard self.offersTimers, let loop = executor as? EventLoop else { return nil }
        let inner = ContinuousClock().makeTimer(on: executor) { [self] in
            if !loop.inEventLoop { self.state.withLock { $0.offLoop += 1 } }
            fire()
        }
        return inner.map { CountingTimer(inner: $0, clock: self) }
    }

    fileprivate func countArming(at deadline: Instant, tolerance: Duration) {
        self.state.withLock { state in
            state.armed += 1
            state.last = (deadline, tolerance)
        }
    }
}

/// The continuous clock's loop timer, counting its armings.
private final class CountingTimer: ExecutorTimer {
    let inner: any ExecutorTimer<ContinuousClock.Instant>
    let clock: CountingClock

    init(inner: any ExecutorTimer<ContinuousClock.Instant>, clock: CountingClock) {
        self.inner = inner
        self.clock = clock
    }

    func arm(at deadline: ContinuousClock.Instant, tolerance: Duration) {
        self.clock.countArming(at: deadline, tolerance: tolerance)
        self.inner.arm(at: deadline, tolerance: tolerance)
    }

    func cancel() {
        self.inner.cancel()
    }
}
#endif

#if os(Linux)
/// A client's timer on its own: the continuous clock times in the loop's heap, another clock sleeps in a task; in both
/// an arming that was replaced or cancelled never fires.
@Suite struct WakeTimerTests {
    /// An actor on `loop`, as the client is on its configuration's loop, owning one timer.
    actor OnLoop<ClockType: Clock> where ClockType.Duration == Duration {
        let loop: EventLoop
        let clock: ClockType
        /// Per firing: when (on the clock) and whether on the loop's thread.
        let fired: AsyncStream<(ClockType.Instant, Bool)>
        private let firing: AsyncStream<(ClockType.Instant, Bool)>.Continuation
        private var timer: WakeTimer<ClockType, OnLoop>?

        init(loop: EventLoop, clock: ClockType) {
            self.loop = loop
            self.clock = clock
            (self.fired, self.firing) = AsyncStream.makeStream()
        }

        nonisolated var unownedExecutor: UnownedSerialExecutor { self.loop.asUnownedSerialExecutor() }

        /// Arms at each delay in turn (each replacing the one before); `cancelFirst` cancels before the last.
        /// Returns the last deadline and whether the clock timed on the loop itself.
        func arm(after delays: [Duration], cancelFirst: Bool = false) -> (ClockType.Instant, Bool) {
            if self.timer == nil {
                self.timer = WakeTimer(clock: self.clock, executor: self.loop, owner: self) { actor in
                    actor.timer?.fired()
                    actor.firing.yield((actor.clock.now, actor.loop.inEventLoop))
                }
            }
            var deadline = self.clock.now
            for (index, delay) in delays.enumerated() {
                if cancelFirst && index == delays.count - 1 { self.timer?.cancel() }
                deadline = self.clock.now.advanced(by: delay)
                self.timer?.arm(at: deadline, tolerance: .zero)
            }
            return (deadline, self.timer?.timesOnExecutor == true)
        }
    }

    /// The first firing, or nil after 10 s.
    func firstFiring<ClockType: Clock>(_ actor: OnLoop<ClockType>) async -> Firing<ClockType.Instant>? {
        let fired = actor.fired
        return await withDeadline { () async -> Firing<ClockType.Instant>? in
            var iterator = fired.makeAsyncIterator()
            guard let (instant, onLoop) = await iterator.next() else { return nil }
            return Firing(instant: instant, onLoop: onLoop)
        }
    }

    struct Firing<Instant: InstantProtocol>: Sendable {
        var instant: Instant
        var onLoop: Bool
    }

    @Test(arguments: [false, true])
    func theContinuousClockTimesOnTheLoopAndOnlyTheLatestArmingFires(cancelFirst: Bool) async throws {
        let actor = OnLoop(loop: .shared, clock: ContinuousClock())
        // The first arming (5 ms) is replaced, or cancelled, by one at 40 ms: a firing before 40 ms is the stale one.
        let (deadline, onLoop) = await actor.arm(after: [.milliseconds(5), .milliseconds(40)], cancelFirst: cancelFirst)
        #expect(onLoop, "a timer in the loop's heap, not a task")
        let firing = try #require(await self.firstFiring(actor))
        #expect(firing.instant >= deadline, "the replaced arming did not fire")
        #expect(firing.onLoop, "fired on the loop's thread")
    }

    @Test(arguments: [false, true])
    func aClockWithoutExecutorTimersSleepsInATaskAndOnlyTheLatestArmingFires(cancelFirst: Bool) async throws {
        let actor = OnLoop(loop: .shared, clock: SuspendingClock())
        let (deadline, onLoop) = await actor.arm(after: [.milliseconds(5), .milliseconds(40)], cancelFirst: cancelFirst)
        #expect(!onLoop, "a task sleeping on the clock")
        let firing = try #require(await self.firstFiring(actor))
        #expect(firing.instant >= deadline, "the replaced arming did not fire")
        #expect(firing.onLoop, "the task hops onto the actor, which runs on the loop")
    }

    @Test func aTimerDoesNotKeepItsOwnerAlive() async throws {
        weak var weakActor: OnLoop<SuspendingClock>?
        do {
            let actor = OnLoop(loop: .shared, clock: SuspendingClock())
            weakActor = actor
            _ = await actor.arm(after: [.seconds(60)])
        }
        #expect(weakActor == nil, "an armed timer's task holds its owner weakly")
    }
}
#endif
