/// The timings of an attempt (`AttemptTimings`): the transport measures its steps and reports them as it opens or
/// ends (`attemptTimed`), or when the machine's connect deadline comes first (`attemptTimingsWanted`); the machine
/// adds the greeting, timed on its own clock, and puts them on the attempt's `.opened` or `.closed` record.
extension SessionMachine {
    /// What the connecting transport reported, and since when its greeting runs.
    struct PendingTimings: Equatable, Sendable {
        var generation: Int
        var timings: AttemptTimings
        /// When the greeting started (the transport opened), on the machine's clock; nil before.
        var greetingSince: Int?

        mutating func greetingStarted(generation: Int, now: Int) {
            guard generation == self.generation else { return }
            self.greetingSince = now
        }

        /// The transport's timings with the greeting, finished or not, up to `now`.
        func withGreeting(finished: Bool, now: Int) -> AttemptTimings {
            var timings = self.timings
            if let since = self.greetingSince {
                timings.greeting = AttemptTimings.Step(
                    start: timings.elapsed, duration: max(0, now - since), finished: finished)
            }
            return timings
        }
    }

    /// The generation whose connect deadline has come at `now`, still connecting: the driver asks its transport how
    /// far it got (`TransportConnection.attemptTimings()`) and reports it with `attemptTimed` before `timerFired(now:)`,
    /// so that the `connect_timeout` record has the steps reached. Nil otherwise, and once the greeting runs (its
    /// transport's timings came with the open).
    public func attemptTimingsWanted(now: Int) -> Int? {
        guard case .live(.connecting(let deadline, greeting: false)) = self.state.stage, now >= deadline else {
            return nil
        }
        return self.state.generation
    }

    /// The transport of `generation`, still connecting, took `timings` so far: reported just before its open
    /// (`transportOpened`) or its end (`transportEnded`), or when asked (`attemptTimingsWanted`). The attempt's
    /// `.opened` record carries them (with the greeting, when one is configured), or its `.closed` record when it
    /// ends before the open. From any other generation, or once it opened: ignored.
    public mutating func attemptTimed(generation: Int, _ timings: AttemptTimings, now: Int) {
        guard case .live(.connecting(_, greeting: false)) = self.state.stage, generation == self.state.generation
        else {
            return  // race: a report for an older attempt, or after the open (the first one stands)
        }
        self.attemptTimings = PendingTimings(generation: generation, timings: timings)
    }

    /// The timings a record of `event` on `generation` carries: the attempt's, on its `.opened` record and on the
    /// `.closed` record that ends it before the open (then forgotten); nil otherwise.
    mutating func timings(for event: LogRecord.Event, generation: Int, now: Int) -> AttemptTimings? {
        // The event first: every record asks, and only two kinds carry timings (a ping's or a pong's record does
        // not copy the pending timings to find that out).
        let finished: Bool
        switch event {
        case .opened: finished = true
        case .closed: finished = false
        default: return nil
        }
        guard let pending = self.attemptTimings, pending.generation == generation else { return nil }
        self.attemptTimings = nil
        return pending.withGreeting(finished: finished, now: now)
    }
}
