#if os(Linux)
import Dispatch
import Glibc
import Synchronization

/// Where work for a loop's thread comes in from any thread (`EventLoop.execute`, the loop's two executors), and
/// where the loop's thread takes it on each turn. A class of its own so that the loop's task executor
/// (`LoopTaskExecutor`) can hand work to the loop without holding the loop.
final class LoopInbox: Sendable {
    struct Queue {
        var tasks: [@Sendable () -> Void] = []
        /// `shutdown()` was called: the loop stops after this turn.
        var isShutdown = false
        /// The loop thread has finished; new work is refused.
        var isClosed = false
    }

    private let queue = Mutex(Queue())
    /// An eventfd write is on its way and not yet read by the loop: further work needs no other one.
    private let wakePending = Atomic<Bool>(false)
    /// The loop found no work queued and is in, or about to enter, `epoll_wait`: work from another thread must wake
    /// it. Set under the queue's lock (`prepareToSleep`), where `execute` reads it, so that work queued after the loop
    /// looked is never left unwoken; cleared as the wait returns. While the loop is awake, work is taken at the end
    /// of its turn without a wake-up (one written then stayed pending and woke the next wait for nothing).
    private let sleeping = Atomic<Bool>(false)
    /// Wake-ups being written outside the lock (see `execute`); the eventfd is closed only at zero.
    private let wakesInFlight = Atomic<Int>(0)
    private let poller: Poller
    private let identity: LoopThreadIdentity
    /// Where executor jobs run once the loop has finished (see `enqueue`).
    private let afterShutdown: DispatchQueue

    init(poller: Poller, identity: LoopThreadIdentity, afterShutdown: DispatchQueue) {
        self.poller = poller
        self.identity = identity
        self.afterShutdown = afterShutdown
    }

    /// An executor's job (`run` runs it): on the loop's thread, or once the loop has finished, in order on the
    /// after-shutdown serial queue, so that no task is lost and an actor's jobs still never run at the same time.
    func enqueue(_ run: @escaping @Sendable () -> Void) {
        if !self.execute(run) {
            self.afterShutdown.async(execute: run)
        }
    }

    /// Queues `work` for the loop's thread, waking it when called from another thread.
    /// - Returns: `false` if the loop has finished and `work` was dropped without running.
    func execute(_ work: @escaping @Sendable () -> Void) -> Bool {
        // The wake-up is written after the lock is released (the loop, woken by it, takes the same lock at
        // once, so writing under it made the loop spin on it). It is counted in flight under the lock, and the
        // loop closes the eventfd only after marking the queue closed under the lock and seeing no wake-up in
        // flight, so a wake can never write to a closed (reused) descriptor.
        let outcome: (accepted: Bool, wake: Bool) = self.queue.withLock { queue in
            guard !queue.isClosed else { return (false, false) }
            queue.tasks.append(work)
            guard !self.identity.isCurrent, self.sleeping.load(ordering: .relaxed),
                  !self.wakePending.exchange(true, ordering: .acquiringAndReleasing)
            else {
                return (true, false)
            }
            self.wakesInFlight.add(1, ordering: .relaxed)
            return (true, true)
        }
        if outcome.wake {
            self.poller.wake()
            self.wakesInFlight.subtract(1, ordering: .releasing)
        }
        return outcome.accepted
    }

    /// The loop's side: reads or changes the queue under its lock.
    func withLock<Result>(_ body: (inout sending Queue) -> sending Result) -> sending Result {
        self.queue.withLock(body)
    }

    /// The loop's side, before it waits: false when work is queued or the loop is shut down (it must not sleep);
    /// otherwise the loop counts as sleeping from now on, and work queued from another thread wakes it.
    func prepareToSleep() -> Bool {
        self.queue.withLock { queue in
            guard queue.tasks.isEmpty, !queue.isShutdown else { return false }
            self.sleeping.store(true, ordering: .relaxed)
            return true
        }
    }

    /// The loop's side, as its wait returns: awake, it takes queued work at the end of its turn without a wake-up.
    func awake() {
        self.sleeping.store(false, ordering: .relaxed)
    }

    /// The loop read the eventfd: the next work from another thread writes it again.
    func wakeConsumed() {
        self.wakePending.store(false, ordering: .releasing)
    }

    /// Waits until no wake-up is being written (called once the queue is closed, before the eventfd is).
    func waitForWakesInFlight() {
        while self.wakesInFlight.load(ordering: .acquiring) > 0 { sched_yield() }
    }
}
#endif
