import Synchronization

/// Where an event loop's timers read the time: the continuous clock, or a `ManualLoopClock` that moves only when a
/// test advances it. Deadlines are `ContinuousClock.Instant`s either way (a manual clock starts at the continuous
/// clock's reading when it is made), so timer code is the same on both; it reads the time from its loop
/// (`EventLoop.now`), never from `ContinuousClock.now`.
package struct EventLoopClock: Sendable {
    fileprivate enum Source: Sendable {
        case continuous
        case manual(ManualLoopClock)
    }

    fileprivate let source: Source

    /// Real time: the loop sleeps in the kernel until its earliest timer is due.
    package static let continuous = EventLoopClock(source: .continuous)

    /// Time that moves only with `clock.advance(by:)`: the loop never sleeps for a timer, and each advance fires the
    /// timers that became due.
    package static func manual(_ clock: ManualLoopClock) -> EventLoopClock {
        EventLoopClock(source: .manual(clock))
    }

    /// The clock's current reading.
    var now: ContinuousClock.Instant {
        switch self.source {
        case .continuous: ContinuousClock.now
        case .manual(let clock): clock.now
        }
    }

    /// Whether the loop may sleep until a timer's deadline; false for a manual clock, which wakes its loops itself.
    var movesWithRealTime: Bool {
        switch self.source {
        case .continuous: true
        case .manual: false
        }
    }

    #if os(Linux)
    /// Lets a manual clock wake `loop` when it moves.
    func attach(_ loop: EventLoop) {
        if case .manual(let clock) = self.source { clock.attach(loop) }
    }
    #endif
}

/// A clock for event loops that moves only when a test advances it, as `ManualClock` does for a client: a test
/// server on a loop with this clock sends its scheduled pings, delays its pongs, closes and times out handshakes
/// exactly when the test says.
///
/// ```swift
/// let clock = ManualLoopClock()
/// let loop = try EventLoop(name: "test", clock: .manual(clock))
/// clock.advance(by: .milliseconds(100))  // the timers due by now fire on the loop, in deadline order
/// await loop.settle()                     // they have run
/// ```
///
/// `advance` returns at once; the timers it made due fire on each attached loop's thread, before any work submitted
/// to that loop after the advance (so `settle()` or any `submit` afterwards is a barrier).
package final class ManualLoopClock: Sendable {
    private struct State {
        var offset: Duration = .zero
        #if os(Linux)
        var loops: [WeakLoop] = []
        #endif
    }

    private let origin: ContinuousClock.Instant
    private let state = Mutex(State())

    /// A clock at its origin (`elapsed == .zero`).
    package init() {
        self.origin = ContinuousClock.now
    }

    /// The current reading: the origin plus every advance.
    package var now: ContinuousClock.Instant { self.origin + self.elapsed }

    /// How far the clock has been advanced since it was made.
    package var elapsed: Duration { self.state.withLock { $0.offset } }

    /// Moves time forward by `duration`; every attached loop then fires the timers that became due.
    package func advance(by duration: Duration) {
        precondition(duration >= .zero, "a manual clock never goes back")
        let loops = self.state.withLock { state in
            state.offset += duration
            return state.loops.compactMap(\.loop)
        }
        for loop in loops { loop.clockMoved() }
    }

    /// Moves time to `milliseconds` after the clock's origin (never back).
    package func advance(toMilliseconds milliseconds: Int) {
        let target = Duration.milliseconds(milliseconds)
        let current = self.elapsed
        precondition(target >= current, "a manual clock never goes back")
        self.advance(by: target - current)
    }

    #if os(Linux)
    fileprivate func attach(_ loop: EventLoop) {
        self.state.withLock { state in
            state.loops.removeAll { $0.loop == nil }
            state.loops.append(WeakLoop(loop: loop))
        }
    }

    private struct WeakLoop {
        weak var loop: EventLoop?
    }
    #endif
}
