#if os(Linux)
import Synchronization

/// A timer made once and armed any number of times on its loop, each arming replacing the one before: for a deadline
/// that moves at every event, such as a client's heartbeat. Armed on the loop's thread, it moves its one entry in the
/// loop's timer heap in place: no allocation, and nothing left in the heap for the arming it replaced (a one-shot
/// timer per arming, `EventLoop.schedule`, costs both). `EventLoop.makeTimer(_:)` makes one.
///
/// `arm` and `cancel` may be called from any thread; off the loop they take effect on its next turn, and either way an
/// arming that was replaced or cancelled never fires once the call returned (the firing runs `work` only if it is
/// still the armed one).
package final class LoopTimer: Sendable {
    private let loop: EventLoop
    private let work: @Sendable () -> Void
    /// The arming that may fire (its heap key's sequence), 0 when none: set by `arm` and `cancel`, taken by the
    /// firing, which runs `work` only if it finds its own arming here.
    let armedSequence = Atomic<UInt64>(0)
    /// Where the timer's entry is in the loop's heap, -1 when it has none. Loop thread only (atomic so that the class
    /// is `Sendable`; relaxed, a plain load or store).
    let heapIndex = Atomic<Int>(-1)

    init(loop: EventLoop, work: @escaping @Sendable () -> Void) {
        self.loop = loop
        self.work = work
    }

    /// Whether an arming is pending (neither fired nor cancelled).
    package var isArmed: Bool { self.armedSequence.load(ordering: .relaxed) != 0 }

    /// Fires `work` on the loop's thread once `deadline` is reached on the loop's clock, at most `leeway` later,
    /// unless armed again or cancelled first (see `EventLoop.schedule(at:leeway:_:)` for the leeway).
    package func arm(at deadline: ContinuousClock.Instant, leeway: Duration = .zero) {
        let sequence = self.loop.nextTimerSequence()
        self.armedSequence.store(sequence, ordering: .relaxed)
        if self.loop.inEventLoop {
            self.loop.place(self, at: deadline, leeway: leeway, sequence: sequence)
            return
        }
        self.loop.execute { [self] in
            // Armed again or cancelled since: that call placed (or removes) the entry.
            guard self.armedSequence.load(ordering: .relaxed) == sequence else { return }
            self.loop.place(self, at: deadline, leeway: leeway, sequence: sequence)
        }
    }

    /// Disarms it. Idempotent; no effect once it fired.
    package func cancel() {
        self.armedSequence.store(0, ordering: .relaxed)
        if self.loop.inEventLoop {
            self.loop.unplace(self)
            return
        }
        self.loop.execute { [self] in
            guard self.armedSequence.load(ordering: .relaxed) == 0 else { return }  // armed again since
            self.loop.unplace(self)
        }
    }

    /// The loop reached the arming `sequence` (its entry has left the heap): runs `work` if it is still armed.
    func fire(sequence: UInt64) {
        guard self.armedSequence.compareExchange(expected: sequence, desired: 0, ordering: .relaxed).exchanged else {
            return
        }
        self.work()
    }
}
#endif
