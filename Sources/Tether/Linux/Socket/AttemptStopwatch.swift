#if os(Linux)
import Synchronization
import TetherCore
import TetherPOSIX

/// Times one `SocketConnection`'s attempt on its loop's clock (`EventLoop.now`, a manual clock in tests): the
/// core marks each step as it begins and ends, the connect race notes its TCP connects on the current hop's
/// `timeline`, and the connection's owner reads a snapshot from any thread (`TransportConnection.attemptTimings()`).
final class AttemptStopwatch: Sendable {
    private struct State {
        /// When the attempt started; nil before `start`.
        var origin: ContinuousClock.Instant?
        var recorder = AttemptTimingsRecorder()
        /// The current hop's TCP connects.
        var timeline: ConnectTimeline?
    }

    private let loop: EventLoop
    private let state = Mutex(State())

    init(loop: EventLoop) {
        self.loop = loop
    }

    /// The attempt starts now.
    func start() {
        let now = self.loop.now
        self.state.withLock { $0.origin = now }
    }

    func begin(_ kind: AttemptTimingsRecorder.Kind) {
        let now = self.loop.now
        self.state.withLock { state in state.recorder.begin(kind, at: Self.offset(now, state.origin)) }
    }

    func end(_ kind: AttemptTimingsRecorder.Kind) {
        let now = self.loop.now
        self.state.withLock { state in state.recorder.end(kind, at: Self.offset(now, state.origin)) }
    }

    func tlsCompleted(resumed: Bool) {
        self.end(.tls)
        self.state.withLock { $0.recorder.tlsCompleted(resumed: resumed) }
    }

    /// A new hop (the first, or after a redirect): its steps replace the previous hop's; returns the timeline its
    /// race notes its connects on.
    func hop(redirected: Bool) -> ConnectTimeline {
        let timeline = ConnectTimeline()
        self.state.withLock { state in
            if redirected { state.recorder.redirected() }
            state.timeline = timeline
        }
        return timeline
    }

    /// The timings now: the steps ended, the running ones unfinished, each TCP connect of the current hop.
    var snapshot: AttemptTimings {
        let now = self.loop.now
        return self.state.withLock { state in
            var timings = state.recorder.snapshot(at: Self.offset(now, state.origin))
            timings.tcp = (state.timeline?.attempts ?? []).map { entry in
                let start = Self.offset(entry.started, state.origin)
                let outcome: AttemptTimings.TCPAttempt.Outcome =
                    switch (entry.ended, entry.error) {
                    case (nil, _): .unfinished
                    case (_, nil): .connected
                    case (_, .cancelled?): .abandoned
                    case (_, let error?): .failed(SocketConnectionCore.connectFailure(for: error))
                    }
                return AttemptTimings.TCPAttempt(
                    address: entry.address.description, start: start,
                    duration: max(0, Self.offset(entry.ended ?? now, state.origin) - start), outcome: outcome)
            }
            return timings
        }
    }

    /// Whole milliseconds from `origin` to `instant` (0 before the start).
    private static func offset(_ instant: ContinuousClock.Instant, _ origin: ContinuousClock.Instant?) -> Int {
        guard let origin, origin < instant else { return 0 }
        let (seconds, attoseconds) = origin.duration(to: instant).components
        return Int(seconds) * 1_000 + Int(attoseconds / 1_000_000_000_000_000)
    }
}
#endif
