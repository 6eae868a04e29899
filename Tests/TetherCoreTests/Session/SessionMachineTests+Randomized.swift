import Testing
@testable import TetherCore

/// Thousands of seeded random event sequences, with invariants checked after every step.
extension SessionMachineTests {
    enum Event {
        case start, stop, opened(Int), ended(Int, TransportEnd), pong(Int, UInt64), pingFailed(Int, UInt64)
        case message(Int), timer, restartMonitor, path(Int, PathState, Bool, Bool, Bool), background, foreground
        case reconnect, greeted(Int), enqueue
    }

    struct Fuzzer {
        var random: SplitMix64

        mutating func below(_ bound: Int) -> Int { Int(self.random.next() % UInt64(bound)) }
        mutating func chance(_ percent: Int) -> Bool { self.below(100) < percent }

        /// Mostly the current generation; otherwise an older, a future or a random one.
        mutating func generation(current: Int) -> Int {
            switch self.below(20) {
            case 0..<14: current
            case 14..<17: current - 1
            case 17: current + 1
            default: self.below(current + 1)
            }
        }

        mutating func end() -> TransportEnd {
            let ends: [TransportEnd] = [
                .peerClosed(code: 1000), .peerClosed(code: 1008), .peerClosed(code: 1013), .peerClosed(code: nil),
                .connectFailed(.refused), .connectFailed(.unsupported), .receiveFailed, .closedLocally,
                .handshakeRejected(status: 503, retryAfter: 30_000), .handshakeRejected(status: 401, retryAfter: nil),
                .handshakeInvalid(detail: "subprotocol not offered"), .protocolViolation(code: 1007),
                .handshakeRejected(status: 429, retryAfter: .max), .handshakeRejected(status: 403, retryAfter: nil),
                .requestFailed(detail: "the provider threw AuthError"),
            ]
            // Permanent failures are rarer so sequences spend time in every phase.
            let end = ends[self.below(ends.count)]
            if end == .peerClosed(code: 1008) || end == .connectFailed(.unsupported)
                || end == .handshakeRejected(status: 401, retryAfter: nil)
                || end == .handshakeRejected(status: 403, retryAfter: nil), !self.chance(20) {
                return .receiveFailed
            }
            return end
        }

        mutating func event(for m: SessionMachine) -> Event {
            let generation = self.generation(current: m.generation)
            let ping = m.lastPingID &- UInt64(self.below(2))
            switch self.below(100) {
            case 0..<4: return .start
            case 4..<6: return .stop
            case 6..<18: return .opened(generation)
            case 18..<26: return .ended(generation, self.end())
            case 26..<38: return .pong(generation, ping)
            case 38..<42: return .pingFailed(generation, ping)
            case 42..<50: return .message(generation)
            case 50..<76: return .timer
            case 76..<78: return .restartMonitor
            case 78..<92:
                let states: [PathState] = [.unknown, .available, .needsConnection, .unavailable]
                let monitor = self.chance(85) ? m.hint.generation : m.hint.generation - 1
                return .path(monitor, states[self.below(4)], self.chance(30), self.chance(20), self.chance(20))
            case 92..<95: return .background
            case 95..<97: return .foreground
            case 97: return .reconnect
            case 98: return .enqueue
            default: return .greeted(generation)
            }
        }
    }

    /// `#expect` is slow in a million-step debug loop; record an issue only on failure.
    func check(_ condition: Bool, _ message: String, sourceLocation: SourceLocation = #_sourceLocation) {
        if !condition {
            Issue.record(Comment(rawValue: message), sourceLocation: sourceLocation)
        }
    }

    /// Async and yielding between sequences: the loop is seconds of CPU in a debug build, and two of them
    /// holding both threads of the cooperative pool would starve every real-time test running beside them.
    static var greeting: SessionConfiguration {
        var configuration = SessionConfiguration()
        configuration.greets = true
        return configuration
    }

    static var limited: SessionConfiguration {
        var configuration = SessionConfiguration(backoff: BackoffPolicy(factorPercent: 150))
        configuration.retryPolicy = RetryPolicy(maximumAttempts: 4, maximumElapsed: .seconds(60))
        return configuration
    }

    @Test(arguments: [
        SessionConfiguration(), SessionConfiguration(lifecycle: .keepAndProbe), Self.greeting, Self.limited,
        Self.providing,  // a 401 or 403 asks again at once, once per attempt (`SessionMachineTests+Request`)
    ])
    func randomSequencesKeepEveryInvariant(configuration: SessionConfiguration) async {
        var fuzzer = Fuzzer(random: SplitMix64(seed: 0x7E7E))
        var records: [LogRecord] = []
        records.reserveCapacity(8)
        for sequence in 0..<5_000 {
            await Task.yield()
            var m = SessionMachine(configuration: configuration, random: SplitMix64(seed: UInt64(sequence)))
            var published = m.status  // what a driver shows before any event
            var now = 0
            var closed = Set<Int>()
            // Generations whose transport reported its end: nothing of theirs is delivered afterwards.
            var ended = Set<Int>()
            var outstandingPing: UInt64?
            // The machine's outbox as a driver runs it: the write in flight, and what each generation wrote.
            var inFlight: (generation: Int, ticket: Int)?
            var wire: [Int: [Int]] = [:]  // -1 is the greeting
            var greeted = Set<Int>()
            for _ in 0..<200 {
                if let wake = m.nextWake, fuzzer.chance(50) {
                    now = max(now, wake)
                } else {
                    now += fuzzer.below(3_000)
                }
                let event = fuzzer.event(for: m)
                let before = m.state
                let liveBefore = before.link != .none && before.link != .closing
                let action: SessionAction
                var staleTransportEvent = false
                func isStale(_ generation: Int) -> Bool {
                    !liveBefore || generation != before.generation
                }
                let closingBefore = before.link == .closing
                switch event {
                case .start: action = m.start(now: now)
                case .stop: action = m.stop(now: now)
                case .opened(let g):
                    staleTransportEvent = isStale(g)
                    action = m.transportOpened(generation: g, now: now)
                case .ended(let g, let end):
                    // The end of the close the machine ordered is expected, not stale.
                    staleTransportEvent = isStale(g) && !(closingBefore && g == before.generation)
                    action = m.transportEnded(generation: g, end: end, now: now)
                    if g <= before.generation { ended.insert(g) }  // a future one is not its end
                case .pong(let g, let ping):
                    staleTransportEvent = isStale(g)
                    action = m.pongReceived(generation: g, ping: ping, now: now)
                case .pingFailed(let g, let ping):
                    staleTransportEvent = isStale(g)
                    action = m.pingFailed(generation: g, ping: ping, now: now)
                case .message(let g):
                    let current = g == before.generation && before.link != .none
                    staleTransportEvent = !current
                    let delivery = m.messageReceived(generation: g, bytes: 10, now: now)
                    // No delivered message from a stale generation or after its transport's end; every message
                    // of the latest generation before its end is delivered (once: one decision per message).
                    let readable = g == before.generation && g >= 1 && !ended.contains(g)
                    self.check((delivery == .deliver) == readable, "message of \(g) (ended \(ended)): \(delivery)")
                    self.check((delivery == .deliver) == current, "delivery disagrees with the link")
                    action = .none
                case .timer: action = m.timerFired(now: now)
                case .restartMonitor:
                    _ = m.restartPathMonitor()
                    action = .none
                case .path(let monitor, let state, let expensive, let constrained, let changed):
                    staleTransportEvent = monitor != before.hint.generation
                    action = m.pathChanged(monitor: monitor, state: state, expensive: expensive,
                                           constrained: constrained, interfacesChanged: changed, now: now)
                case .background: action = m.enteredBackground(now: now)
                case .foreground: action = m.enteredForeground(now: now)
                case .greeted(let g):
                    staleTransportEvent = isStale(g)
                    action = m.greetingSent(generation: g, now: now)
                case .enqueue:
                    switch m.messageQueued(bytes: 10, expiresAfter: fuzzer.chance(20) ? 1_000 : nil, now: now) {
                    case .refused: action = .none
                    case .accepted(_, let next): action = next
                    }
                case .reconnect:
                    action = m.reconnectRequested(now: now)
                    // A user's attempt always goes out from waiting, offline or failed, whatever the path says.
                    let retryable = [SessionPhase.waiting, .offline, .failed].contains(before.phase)
                        && !before.background
                    let next = SessionAction.openTransport(generation: before.generation + 1, held: before.readingHeld)
                    self.check(retryable == (action == next), "reconnect from \(before.phase): \(action)")
                    self.check(m.attempts <= before.backoff.attempts, "a user's attempt counted")
                }
                records.removeAll(keepingCapacity: true)
                m.drainRecords { records.append($0) }
                // A status is published after an event when, and only when, something it shows changed (a new
                // round-trip time alone is no change), and it is the machine's status then.
                let change = m.statusChange()
                let status = m.status
                var unchanged = status
                unchanged.lastRTT = published.lastRTT
                if (change != nil) != (unchanged != published) || change.map({ $0.status != status }) == true {
                    Issue.record("after \(event): published \(String(describing: change)), shown \(published)")
                }
                if let change { published = change.status }

                // An event from a non-current generation changes nothing but the stale counter, and leaves one
                // record saying what was ignored.
                self.check(m.staleEvents - before.staleEvents == records.count(where: { $0.kind == .stale }),
                           "stale count and stale records disagree")
                if staleTransportEvent {
                    var after = m.state
                    after.staleEvents -= 1
                    guard action == .none, after == before, records.count == 1, records[0].kind == .stale else {
                        Issue.record("stale \(event) changed the machine: \(action), \(before) -> \(m.state)")
                        return
                    }
                }
                // No action names a non-current generation; each generation gets at most one close.
                switch action {
                case .none:
                    break
                case .openTransport(let g, _):
                    let fresh = g == m.generation && g == before.generation + 1
                    self.check(fresh, "open must name a new generation")
                    outstandingPing = nil
                case .sendPing(let g, let ping):
                    self.check(g == m.generation, "action names an old generation")
                    self.check(outstandingPing == nil, "a second ping while one is outstanding")
                    outstandingPing = ping
                case .sendGreeting(let g):
                    self.check(configuration.greets && g == m.generation, "greeting for another generation")
                    wire[g, default: []].append(-1)
                    greeted.insert(g)
                case .writeQueued(let g, let ticket):
                    self.check(g == m.generation && m.phase == .open, "a write to a connection that is not open")
                    self.check(inFlight == nil, "a second write while one is in flight")
                    inFlight = (g, ticket)
                case .holdReading:
                    self.check(false, "reading held although the consumer never fell behind")
                case .writeParkedSend:
                    self.check(false, "a parked send written although none was parked")
                case .closeTransport(let g, let reason, let code, _):
                    self.check(g == m.generation, "action names an old generation")
                    self.check(!closed.contains(g), "generation \(g) closed twice")
                    closed.insert(g)
                    let recorded = records.contains {
                        $0.kind == .closed && $0.reason == reason && $0.code == Int(code)
                    }
                    self.check(recorded, "close action without its record")
                }
                // Every close has a reason, and a generation ends at most once.
                for record in records where record.kind == .closed {
                    self.check(record.reason != nil, "close without a reason")
                    self.check(record.generation == before.generation, "close record for another generation")
                }
                self.check(records.count(where: { $0.kind == .closed }) <= 1, "two closes in one step")
                // Every wait is bounded by the configuration, whatever the peer asked for (docs/ARCHITECTURE.md §10).
                for record in records where record.kind == .retryScheduled {
                    let longest = max(
                        configuration.backoff.cap.milliseconds, m.timing.maximumRetryAfter, m.timing.retryLaterDelay)
                    self.check((0...longest).contains(record.delay ?? -1), "a wait beyond the configuration's bounds")
                }
                if records.contains(where: { $0.kind == .pong }) || m.state.link == .none || m.state.link == .closing
                    || m.phase == .suspended {
                    outstandingPing = nil
                }
                // The attempt counter never grows while offline.
                if m.phase == .offline || before.phase == .offline {
                    self.check(m.attempts <= before.backoff.attempts, "attempts grew while offline")
                }
                // nextWake is exact: nothing happens before it, and nil means no timer is needed.
                var probe = m
                if let wake = m.nextWake {
                    if wake > now {
                        let early = probe.timerFired(now: wake - 1)
                        self.check(early == .none && probe.state == m.state, "timer acted before nextWake")
                    }
                } else {
                    let late = probe.timerFired(now: now + 10_000_000)
                    self.check(late == .none && probe.state == m.state, "timer acted although nextWake is nil")
                }
                // The outbox is written only on an open session, after its greeting; a write that did not happen puts
                // the message back first.
                if m.phase == .open {
                    self.check(!configuration.greets || greeted.contains(m.generation), "open without a greeting")
                }
                while let write = inFlight, fuzzer.chance(70) {
                    let result: WriteResult = fuzzer.chance(10) ? .notOpen : .written
                    if result == .written { wire[write.generation, default: []].append(write.ticket) }
                    inFlight = nil
                    switch m.writeFinished(generation: write.generation, result: result, now: now) {
                    case .writeQueued(let g, let ticket):
                        self.check(g == m.generation && m.phase == .open, "a write to a connection that is not open")
                        inFlight = (g, ticket)
                    case let next:
                        self.check(next == .none, "a write's end answered with \(next)")
                    }
                }
                if let maximum = configuration.retryPolicy.maximumAttempts {
                    self.check(m.attempts <= maximum, "more failed attempts than the retry policy allows")
                    self.check(m.phase != .waiting || m.attempts < maximum || m.retryAt == now,
                               "waiting past the retry policy's limit")
                }
                self.check(m.droppedRecords == 0, "records dropped")
                self.check((m.phase == .failed) == (m.failure != nil), "failure set outside .failed")
                self.check((m.phase == .waiting) == (m.retryAt != nil), "retryAt set outside .waiting")
                self.check(m.phase != .open || m.state.stage.connection?.generation == m.generation,
                           "open on a connection that is not the latest")
            }
            // Across every reconnect: queued messages written in the order queued, none twice, and on every
            // generation the greeting before any of them.
            let written = wire.keys.sorted().flatMap { wire[$0]!.filter { $0 >= 0 } }
            self.check(zip(written, written.dropFirst()).allSatisfy { $0 < $1 }, "outbox order broken: \(written)")
            if configuration.greets {
                for (g, log) in wire where log.contains(where: { $0 >= 0 }) {
                    self.check(log.first == -1, "generation \(g) wrote a queued message before its greeting")
                }
            }
        }
    }
}
