#if os(Linux)
import Dispatch
import Glibc
import Synchronization
#if canImport(CTetherLinux)
import CTetherLinux
#endif

/// Something registered with an event loop for readiness events. Only used on the loop's thread.
protocol LoopSelectable: AnyObject {
    /// The kernel reported `readiness` for the registered descriptor.
    func ready(_ readiness: Readiness)
    /// The loop is shutting down: close the descriptor and finish waiting work with `.closed`.
    func loopShuttingDown()
}

/// One thread that waits for socket readiness with `epoll_wait` and runs the owners' callbacks,
/// timers and submitted work — in that order on each turn. No thread per connection, no polling:
/// the thread sleeps in the kernel until a descriptor is ready, the earliest timer is due, or
/// another thread wakes it through an eventfd.
///
/// Everything that happens on sockets of this loop (reads, write completions, end notifications,
/// accepts, timers) runs on this one thread, so a protocol layer can keep its state confined to it
/// (see `LoopBound`) without locks.
package final class EventLoop: Sendable {
    /// A process-wide loop, started on first use and never shut down.
    package static let shared: EventLoop = {
        do {
            return try EventLoop(name: "tether-loop")
        } catch {
            fatalError("TetherPOSIX: cannot start the shared event loop: \(error)")
        }
    }()

    /// Size of the read buffer shared by all connections of a loop. Reads are borrowed from it,
    /// so a connection costs no buffer memory while idle.
    static let readBufferSize = 64 * 1024
    private static let eventCapacity = 256

    /// The thread's name (at most 15 bytes are shown by the kernel).
    package let name: String
    /// Where the timers read the time.
    package let clock: EventLoopClock
    let identity = LoopThreadIdentity()
    private let poller: Poller
    private let inbox: LoopInbox
    private let timerSequence = Atomic<UInt64>(0)
    /// How many times the thread has come back from `epoll_wait`, slept or not (see `wakeUps`).
    private let wakeUpCount = Atomic<Int>(0)
    /// How many pieces of queued work (jobs and `execute` closures) the thread has run (see `workRun`).
    private let workCount = Atomic<Int>(0)
    /// Descriptors this loop owns: its epoll and eventfd plus every socket made for it and not yet
    /// closed. Tests check that it returns to zero after `shutdown()`.
    private let ownedDescriptors = Atomic<Int>(0)
    private let thread = Mutex<pthread_t?>(nil)
    private let state: LoopBound<LoopState>
    /// Runs jobs for this loop as an executor once its thread has exited (see the `SerialExecutor` conformance).
    fileprivate let afterShutdown: DispatchQueue
    /// The loop as a task executor (see `LoopTaskExecutor`, and the `SerialExecutor` conformance for why the two
    /// are separate objects).
    package let taskExecutor: LoopTaskExecutor

    /// Creates a loop and starts its thread.
    /// - Parameter name: the thread's name, visible in debuggers and `top -H`.
    /// - Throws: when the kernel refuses an epoll instance, an eventfd or a thread.
    package convenience init(name: String = "tether-loop") throws(SocketError) {
        try self.init(name: name, clock: .continuous)
    }

    /// Creates a loop whose timers read `clock` (tests pass a manual one) and starts its thread.
    package init(name: String = "tether-loop", clock: EventLoopClock) throws(SocketError) {
        self.name = name
        self.clock = clock
        self.afterShutdown = DispatchQueue(label: "\(name).after-shutdown")
        self.poller = try Poller()
        self.inbox = LoopInbox(poller: self.poller, identity: self.identity, afterShutdown: self.afterShutdown)
        self.taskExecutor = LoopTaskExecutor(inbox: self.inbox)
        self.ownedDescriptors.store(2, ordering: .relaxed)
        self.state = LoopBound(LoopState(), identity: self.identity)
        let box = Unmanaged.passRetained(ThreadStart { [self] in self.run() })
        var handle = pthread_t()
        let result = pthread_create(&handle, nil, { context in
            let start = Unmanaged<ThreadStart>.fromOpaque(context!).takeRetainedValue()
            start.body()
            return nil
        }, box.toOpaque())
        guard result == 0 else {
            box.release()
            self.poller.close()
            throw SocketError(operation: "pthread_create", errno: result)
        }
        GNUExtensions.setThreadName.map { _ = $0(handle, String(name.utf8.prefix(15)) ?? "tether-loop") }
        self.thread.withLock { $0 = handle }
        clock.attach(self)
    }

    /// `true` when called on this loop's thread.
    package var inEventLoop: Bool { self.identity.isCurrent }

    /// The time on the loop's clock: what `schedule(at:)` deadlines are compared with. Timer code reads the time
    /// here (never from `ContinuousClock.now`), so that it runs on a manual clock in tests.
    package var now: ContinuousClock.Instant { self.clock.now }

    /// How many turns the loop's thread has taken: every return from `epoll_wait`, whether it slept (for a
    /// descriptor, a timer, or another thread's work) or found work queued by the turn before and did not (a zero
    /// timeout). A loop that spins, re-queueing work or re-arming a timer already due, counts every turn, so an idle
    /// test that sees this stay still has seen the thread asleep. Benchmarks and tests read it to show that idle
    /// connections cost no polling.
    package var wakeUps: Int { self.wakeUpCount.load(ordering: .relaxed) }

    /// How many pieces of queued work the loop's thread has run: jobs of the tasks and actors it executes, and
    /// `execute` closures. Tests read it to show that a task on the loop resumes without needless hops.
    package var workRun: Int { self.workCount.load(ordering: .relaxed) }

    /// Returns once the loop has run everything queued before this call, including the timers a manual clock's
    /// advance made due: the barrier a test waits on after moving the clock.
    package func settle() async {
        _ = try? await self.submit {}
    }

    /// A manual clock moved: fire what became due, ahead of work queued after the move.
    func clockMoved() {
        self.execute { [self] in self.runDueTimers(self.state.value) }
    }

    /// Runs `work` at the end of the current turn of the loop, after this turn's readiness callbacks, timers and
    /// queued work, before the thread sleeps again. Loop thread only (check `inEventLoop`; elsewhere it traps).
    ///
    /// For work that wakes another thread on behalf of many owners: the client's event channels resume their
    /// readers here, so that the readers woken by the timers and reads of one turn are handed to the thread pool
    /// together, which wakes one of its threads for all of them instead of one per reader.
    package func atEndOfTurn(_ work: @escaping () -> Void) {
        self.state.value.endOfTurn.append(EndOfTurnWork(run: work))
    }

    /// Runs `work` on the loop's thread, after what is already queued. Callable from any thread,
    /// including the loop's own (then `work` runs on the next turn, never re-entrantly).
    /// - Returns: `false` if the loop is shut down and `work` was dropped without running.
    @discardableResult
    package func execute(_ work: @escaping @Sendable () -> Void) -> Bool {
        self.inbox.execute(work)
    }

    /// Runs `body` on the loop's thread and returns its result.
    /// - Throws: `SocketError.closed` if the loop is shut down.
    package func submit<Result: Sendable>(
        _ body: @escaping @Sendable () -> Result
    ) async throws(SocketError) -> Result {
        let outcome: Swift.Result<Result, SocketError> = await withCheckedContinuation { continuation in
            let accepted = self.execute { continuation.resume(returning: .success(body())) }
            if !accepted { continuation.resume(returning: .failure(.closed)) }
        }
        return try outcome.get()
    }

    /// Runs `work` on the loop's thread once `delay` has passed (never earlier; as soon as the loop
    /// is free after that). Timers with the same deadline fire in the order they were scheduled.
    /// Callable from any thread. Work scheduled on a loop that is shut down never runs.
    @discardableResult
    package func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> TimerHandle {
        self.schedule(at: self.clock.now + delay, work)
    }

    /// Like `schedule(after:_:)` with the delay in milliseconds (the unit of Tether's state machines).
    @discardableResult
    package func schedule(afterMilliseconds delay: Int, _ work: @escaping @Sendable () -> Void) -> TimerHandle {
        self.schedule(at: self.clock.now + .milliseconds(delay), work)
    }

    /// Runs `work` on the loop's thread once `deadline` is reached on the loop's clock (`now`).
    /// - Parameter leeway: how much later the timer may fire (never earlier). Timers whose windows overlap
    ///   fire on one wake-up of the loop, which saves CPU and power when many connections keep timers of their
    ///   own (heartbeats). Zero (the default): as soon as the loop is free after `deadline`.
    @discardableResult
    package func schedule(
        at deadline: ContinuousClock.Instant,
        leeway: Duration = .zero,
        _ work: @escaping @Sendable () -> Void
    ) -> TimerHandle {
        let timer = ScheduledTimer(deadline: deadline, leeway: leeway, sequence: self.nextTimerSequence(), work: work)
        if self.identity.isCurrent {
            self.state.value.timers.push(timer)
        } else {
            self.execute { [state] in state.value.timers.push(timer) }
        }
        return TimerHandle(timer: timer)
    }

    /// A timer made once and armed any number of times (`LoopTimer`): for a deadline that moves at every event, where a
    /// `schedule` per move would allocate a timer and leave the replaced one in the heap until its time.
    package func makeTimer(_ work: @escaping @Sendable () -> Void) -> LoopTimer {
        LoopTimer(loop: self, work: work)
    }

    /// The next arming's tie-breaker: timers with equal deadlines fire in the order they were armed. Never 0.
    func nextTimerSequence() -> UInt64 {
        self.timerSequence.wrappingAdd(1, ordering: .relaxed).newValue
    }

    /// Puts `timer`'s entry in the heap for this arming, or moves it there. Loop thread only.
    func place(_ timer: LoopTimer, at deadline: ContinuousClock.Instant, leeway: Duration, sequence: UInt64) {
        self.state.value.timers.place(timer, at: deadline, leeway: leeway, sequence: sequence)
    }

    /// Takes `timer`'s entry out of the heap, if it has one. Loop thread only.
    func unplace(_ timer: LoopTimer) {
        self.state.value.timers.remove(timer)
    }

    /// Stops the loop and waits for its thread to exit. Registered sockets are closed: connections
    /// end with `.failed(.closed)`, pending connects fail with `.closed`, listeners stop. Work
    /// queued until the loop thread exits still runs (a task that keeps re-queueing itself delays
    /// shutdown); after that `execute` returns `false`. Idempotent.
    /// Must not be called on the loop's own thread; a second, concurrent caller may return before the
    /// thread has exited. Meant for tests; `shared` is never shut down.
    package func shutdown() {
        precondition(!self.identity.isCurrent, "EventLoop.shutdown() called on its own thread")
        self.inbox.withLock { inbox in
            inbox.isShutdown = true
            if !inbox.isClosed { self.poller.wake() }
        }
        if let handle = self.thread.withLock({ thread in
            let handle = thread
            thread = nil
            return handle
        }) {
            pthread_join(handle, nil)
        }
    }

    // MARK: - Loop thread

    private func run() {
        self.identity.adoptCurrentThread()
        let state = self.state.value
        while true {
            let timeout = self.pollTimeout(state)
            let count = self.poller.wait(into: state.events, timeout: timeout)
            self.inbox.awake()
            self.wakeUpCount.add(1, ordering: .relaxed)
            for index in 0..<count {
                let event = state.events[index]
                let id = event.data.u64
                if id == Poller.wakeID {
                    self.poller.consumeWake()
                    self.inbox.wakeConsumed()
                } else if let owner = state.registrations[id] {
                    owner.ready(Poller.readiness(of: event))
                }
            }
            self.runDueTimers(state)
            var stop = self.runTasks(state)
            // What the end of the turn resumes on this loop (a consumer that prefers it) runs in this turn too.
            for _ in 0..<Self.taskRoundsPerTurn where !stop && !state.endOfTurn.isEmpty {
                self.runEndOfTurn(state)
                stop = self.runTasks(state)
            }
            self.runEndOfTurn(state)
            if stop { break }
        }
        state.isShuttingDown = true
        for owner in Array(state.registrations.values) { owner.loopShuttingDown() }
        state.registrations.removeAll()
        // Work queued until now still runs. Once the queue is empty it closes for good, and at that
        // moment this thread stops being the loop thread: nothing below touches loop-bound state.
        while true {
            self.runEndOfTurn(state)
            let closed = self.inbox.withLock { inbox in
                if inbox.tasks.isEmpty {
                    inbox.isClosed = true
                    self.identity.threadExited()
                    return true
                }
                swap(&inbox.tasks, &state.spareTasks)
                return false
            }
            if closed { break }
            for task in state.spareTasks { task() }
            state.spareTasks.removeAll()
        }
        state.timers.removeAll()
        // No new wake-up can start (the inbox is closed); let those already past the lock finish writing.
        self.inbox.waitForWakesInFlight()
        self.poller.close()
        self.ownedDescriptors.subtract(2, ordering: .relaxed)
        state.releaseBuffers()
    }

    /// Milliseconds until the timers' wake time (`TimerHeap.wakeTime`, rounded up, so timers never fire
    /// early), 0 when work is queued, or -1 (sleep until woken) when there is nothing to wait for.
    private func pollTimeout(_ state: LoopState) -> Int32 {
        // From here on, work queued from another thread wakes the loop (`LoopInbox.prepareToSleep`).
        guard self.inbox.prepareToSleep() else { return 0 }
        guard self.clock.movesWithRealTime else {
            // A manual clock fires what its moves make due (`clockMoved`); waiting in real time brings nothing closer.
            guard let first = state.timers.earliestDeadline() else { return -1 }
            return first <= self.clock.now ? 0 : -1
        }
        guard let wake = state.timers.wakeTime() else { return -1 }
        let remaining = self.clock.now.duration(to: wake)
        guard remaining > .zero else { return 0 }
        let (seconds, attoseconds) = remaining.components
        let milliseconds = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(clamping: milliseconds)
    }

    private func runDueTimers(_ state: LoopState) {
        let now = self.clock.now
        while let (first, sequence) = state.timers.popDue(by: now) {
            first.fire(sequence: sequence)
        }
    }

    /// Runs the queued work. Returns `true` when the loop should stop.
    ///
    /// Work queued by that work runs too, for a few rounds: a chain of steps on the loop (a read resumes the
    /// task reading the connection's events, which resumes the task consuming the client's events) then
    /// finishes in this turn instead of costing another `epoll_wait` per step. The bound keeps sockets served
    /// while work keeps re-queueing itself.
    private func runTasks(_ state: LoopState) -> Bool {
        // The work runs from a local array, swapped with the state's spare one: an access to the state's storage
        // that lasts while work runs (or elements are destroyed) is checked for exclusivity at run time, each time.
        var tasks: [@Sendable () -> Void] = []
        swap(&tasks, &state.spareTasks)
        defer { swap(&tasks, &state.spareTasks) }
        for _ in 0..<Self.taskRoundsPerTurn {
            let stop = self.inbox.withLock { inbox in
                swap(&inbox.tasks, &tasks)
                return inbox.isShutdown
            }
            guard !tasks.isEmpty else { return stop }
            self.workCount.add(tasks.count, ordering: .relaxed)
            for task in tasks { task() }
            tasks.removeAll(keepingCapacity: true)
            if stop { return true }
        }
        return false
    }

    /// Rounds of queued work one turn runs before the next `epoll_wait` (internal for tests).
    static let taskRoundsPerTurn = 4

    /// Runs the work `atEndOfTurn` deferred, including what that work defers in turn.
    private func runEndOfTurn(_ state: LoopState) {
        guard !state.endOfTurn.isEmpty else { return }
        // From a local array, as `runTasks` does.
        var work: [EndOfTurnWork] = []
        swap(&work, &state.spareEndOfTurn)
        defer { swap(&work, &state.spareEndOfTurn) }
        repeat {
            swap(&state.endOfTurn, &work)
            for piece in work { piece.run() }
            work.removeAll(keepingCapacity: true)
        } while !state.endOfTurn.isEmpty
    }

    // MARK: - Descriptor accounting (any thread)

    /// Records that `descriptor` now belongs to a socket of this loop.
    func adopt(_ descriptor: Int32) {
        self.ownedDescriptors.add(1, ordering: .relaxed)
        #if DEBUG
        adoptedDescriptors.withLock { adopted in
            assert(adopted.insert(descriptor).inserted, "TetherPOSIX adopted descriptor \(descriptor) twice")
        }
        #endif
    }

    /// Closes an adopted descriptor. Each adopted descriptor is released exactly once.
    func release(_ descriptor: Int32) {
        #if DEBUG
        // Closing under the lock keeps the check exact: the number cannot be reused in between.
        adoptedDescriptors.withLock { adopted in
            assert(adopted.remove(descriptor) != nil, "TetherPOSIX released descriptor \(descriptor) it does not own")
            Socket.close(descriptor)
        }
        #else
        Socket.close(descriptor)
        #endif
        self.ownedDescriptors.subtract(1, ordering: .relaxed)
    }

    /// The number of descriptors this loop owns now (see `ownedDescriptors`).
    var ownedDescriptorCount: Int { self.ownedDescriptors.load(ordering: .relaxed) }

    // MARK: - Registration (loop thread only)

    /// The loop's shared read buffer. Loop thread only; valid until the loop exits.
    var readBuffer: UnsafeMutableRawBufferPointer { self.state.value.readBuffer }

    /// Adds `fd` to epoll for `interest`; `owner.ready` is called with its readiness from now on.
    /// The loop keeps `owner` alive until `deregister`.
    func register(_ fd: Int32, interest: Interest, owner: any LoopSelectable) throws(SocketError) -> UInt64 {
        let id = try self.register(owner)
        do {
            try self.poller.add(fd, id: id, interest: interest)
        } catch {
            self.state.value.registrations[id] = nil
            throw error
        }
        return id
    }

    /// Removes `fd` from epoll; no more `ready` calls reach its owner, even for events of this turn.
    func deregister(_ fd: Int32, id: UInt64) {
        self.poller.remove(fd)
        self.state.value.registrations[id] = nil
    }

    /// Keeps `owner` alive (and tells it when the loop shuts down) without watching a descriptor
    /// yet; `watch` adds one under the returned id.
    func register(_ owner: any LoopSelectable) throws(SocketError) -> UInt64 {
        let state = self.state.value
        guard !state.isShuttingDown else { throw .closed }
        state.lastRegistrationID += 1
        state.registrations[state.lastRegistrationID] = owner
        return state.lastRegistrationID
    }

    /// Changes what epoll watches `fd` for, from `previous` to `interest`: adds it, modifies it, or
    /// (for an empty `interest`) removes it from epoll while its owner stays registered.
    func watch(_ fd: Int32, id: UInt64, interest: Interest, previous: Interest) throws(SocketError) {
        switch (previous.isEmpty, interest.isEmpty) {
        case (true, true): return
        case (true, false): try self.poller.add(fd, id: id, interest: interest)
        case (false, true): self.poller.remove(fd)
        case (false, false): if interest != previous { try self.poller.modify(fd, id: id, interest: interest) }
        }
    }

    /// Forgets an owner registered with `register(_:)`; its descriptor must no longer be watched.
    func deregister(id: UInt64) {
        self.state.value.registrations[id] = nil
    }

    /// The eventfd that wakes the loop (for tests).
    var wakeDescriptor: Int32 { self.poller.wakeFD }

}

#if DEBUG
/// Debug builds check that every socket descriptor is closed once and only by its owner: closing
/// a number twice could close an unrelated descriptor that reused it.
private let adoptedDescriptors = Mutex<Set<Int32>>([])
#endif

/// A closure deferred to the end of a turn, in a struct: an array of bare closures stores each at the generic
/// representation, which wrapped every one appended in a reabstraction thunk (an allocation per deferral, once per
/// client whose consumer a turn wakes).
private struct EndOfTurnWork {
    let run: () -> Void
}

/// State touched only on the loop's thread.
private final class LoopState {
    var registrations: [UInt64: any LoopSelectable] = [:]
    var lastRegistrationID = Poller.wakeID
    var timers = TimerHeap()
    var spareTasks: [@Sendable () -> Void] = []
    /// Work deferred to the end of the turn (`EventLoop.atEndOfTurn`), and the array it is run from.
    var endOfTurn: [EndOfTurnWork] = []
    var spareEndOfTurn: [EndOfTurnWork] = []
    var isShuttingDown = false
    let events = UnsafeMutableBufferPointer<epoll_event>.allocate(capacity: 256)
    let readBuffer = UnsafeMutableRawBufferPointer.allocate(
        byteCount: EventLoop.readBufferSize,
        alignment: 16
    )

    func releaseBuffers() {
        self.events.deallocate()
        self.readBuffer.deallocate()
    }
}

/// The body of the loop thread, passed through `pthread_create`'s context pointer.
private final class ThreadStart {
    let body: () -> Void
    init(body: @escaping () -> Void) { self.body = body }
}
#endif

#if os(Linux)
/// The loop as a serial executor: an actor whose `unownedExecutor` is the loop's runs on the loop's thread, so loop
/// callbacks (a read, a timer) may enter it synchronously with `assumeIsolated`.
///
/// The loop is a task executor too, as a separate object (`taskExecutor`, a `LoopTaskExecutor`): the runtime tells
/// executors apart by identity, and a job it ran as isolated to the loop's serial executor had to hop (another job
/// through the loop) every time its nonisolated code resumed, since "isolated to the loop" and "nonisolated" were
/// then different contexts on one identity. A consumer on the loop paid 16 such hops per echoed message.
///
/// Work scheduled from the loop thread itself needs no wake-up, so a chain of steps on the loop finishes in one
/// turn. Such work must not block: it delays every socket of the loop. After `shutdown()`, jobs run in order on a
/// serial dispatch queue instead, so that no task is lost and an actor's jobs still never run at the same time.
extension EventLoop: SerialExecutor {
    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let serial = self.asUnownedSerialExecutor()
        self.inbox.enqueue { job.runSynchronously(on: serial) }
    }

    package func checkIsolated() {
        if self.inEventLoop { return }
        precondition(self.identity.hasExited, "not on the event loop's thread")
        dispatchPrecondition(condition: .onQueue(self.afterShutdown))
    }

    package func isIsolatingCurrentContext() -> Bool? {
        if self.inEventLoop { return true }
        return self.identity.hasExited ? nil : false
    }
}

/// The loop as a task executor (`EventLoop.taskExecutor`): a task that prefers it (`Task(executorPreference:)`,
/// `withTaskExecutorPreference`) runs its nonisolated code, and the code of default actors it calls, on the loop's
/// thread, as nonisolated code: resuming it there costs no further hop. Holds the loop's inbox, not the loop, so a
/// task that keeps preferring it after the loop has gone still runs (on the after-shutdown queue).
package final class LoopTaskExecutor: TaskExecutor {
    private let inbox: LoopInbox

    init(inbox: LoopInbox) {
        self.inbox = inbox
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = self.asUnownedTaskExecutor()
        self.inbox.enqueue { job.runSynchronously(on: executor) }
    }
}
#endif
