import TetherCore

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

    /// Ends `events` after the events published so far: a reader gets each of them, then the end. For tools that
    /// stop a client and then print what arrived during the closing handshake (`tether connect` at the end of its
    /// input), knowing when they have it all. Call it after `stop()` has returned.
    package nonisolated func finishEvents() {
        self.eventSink.finish()
    }

    /// Returns once no queued message waits (at once if none does): every one was written, dropped or reported, and
    /// every acknowledged send was acknowledged or given up.
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

    /// Queued messages not settled yet, acknowledged sends waiting for their acknowledgement included.
    package var queuedCount: Int { self.machine.queuedCount }

    /// The number of live connections, connections still being read, timers, path monitors and tasks of the
    /// client's (writing a greeting or the outbox, asking a request provider); all zero once `stop()` has returned.
    package var resources: (connections: Int, readers: Int, timers: Int, pathMonitors: Int, writers: Int) {
        (
            self.connections.liveCount, self.connections.readingCount, self.timer.isArmed ? 1 : 0,
            self.pathMonitor == nil ? 0 : 1, self.greeters.count + self.requesters.count + (self.writer == nil ? 0 : 1)
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
