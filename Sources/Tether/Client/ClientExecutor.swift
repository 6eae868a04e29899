#if os(Linux)
import TetherPOSIX

/// Runs a client's actor jobs on the socket event loop's thread instead of the cooperative pool.
///
/// Heartbeat verdicts must not depend on how busy the application's cooperative pool is: on a 2-core machine
/// two CPU-bound tasks hold every cooperative thread, and a client scheduled there would see its pong (or its
/// timer) seconds late and close a healthy connection as dead. The event loop thread does only short,
/// non-blocking work, so a job enqueued here runs promptly, right next to the transport's I/O.
final class EventLoopExecutor: SerialExecutor {
    let loop: EventLoop

    init(loop: EventLoop) {
        self.loop = loop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = self.asUnownedSerialExecutor()
        let accepted = self.loop.execute {
            job.runSynchronously(on: executor)
        }
        // The shared loop is never shut down; a private loop that was must not swallow jobs silently.
        precondition(accepted, "the client's event loop was shut down while the client was running")
    }

    func checkIsolated() {
        precondition(self.loop.inEventLoop, "not on the client's event loop")
    }
}
#endif
