import Testing
@testable import TetherCore

/// Seeded random sequences under `.makeBeforeBreak`, with interface switches frequent: two live generations at once
/// must never confuse the generation rules.
extension SessionMachineTests {
    static var handingOver: SessionConfiguration {
        var configuration = SessionConfiguration(backoff: BackoffPolicy(jitterPercent: 0))
        configuration.interfaceSwitch = .makeBeforeBreak(drain: .milliseconds(300))
        return configuration
    }

    static var handingOverWithGreeting: SessionConfiguration {
        var configuration = Self.handingOver
        configuration.greets = true
        return configuration
    }

    @Test(arguments: [Self.handingOver, Self.handingOverWithGreeting])
    func randomSwitchesUnderMakeBeforeBreakKeepTheGenerationRules(configuration: SessionConfiguration) async {
        var fuzzer = Fuzzer(random: SplitMix64(seed: 0x4A4D))
        var steps: [LogRecord.HandoverStep: Int] = [:]  // how often each step came: the sequences reach them all
        for sequence in 0..<600 {
            await Task.yield()
            var m = SessionMachine(configuration: configuration, random: SplitMix64(seed: UInt64(sequence)))
            let monitor = m.restartPathMonitor()
            var now = 0
            var interfaces = 0
            var closed = Set<Int>()
            var ended = Set<Int>()  // generations whose end was reported: nothing of theirs is delivered afterwards
            var opened = Set<Int>()
            var inFlight: (generation: Int, ticket: Int)?
            for _ in 0..<150 {
                if let wake = m.nextWake, fuzzer.chance(50) {
                    now = max(now, wake)
                } else {
                    now += fuzzer.below(1_000)
                }
                let before = m.state
                // The generations whose events are not stale: the session's (live or closing), the side's, and the
                // sides a later switch replaced before their end.
                var current = Set<Int>(before.closedSides)
                if before.link != .none { current.insert(before.generation) }
                if let side = before.side { current.insert(side.generation) }
                let candidates = [before.generation, before.side?.generation ?? before.generation, before.issued,
                                  before.issued + 1, max(0, before.issued - 2)]
                // The side's events half the time while there is one, so that handovers get to their end.
                let g = before.side != nil && fuzzer.chance(50)
                    ? before.side!.generation : candidates[fuzzer.below(candidates.count)]
                var stale = false
                var action = SessionAction.none
                switch fuzzer.below(100) {
                case 0..<3: action = m.start(now: now)
                case 3..<5: action = m.stop(now: now)
                case 5..<20:
                    stale = !current.contains(g)
                    action = m.transportOpened(generation: g, now: now)
                case 20..<28:
                    stale = !current.contains(g)
                    action = m.transportEnded(generation: g, end: fuzzer.end(), now: now)
                    if g <= before.issued { ended.insert(g) }
                case 28..<36:
                    let delivery = m.messageReceived(generation: g, bytes: 1, now: now)
                    let readable = current.contains(g) && !ended.contains(g) && g >= 1
                    self.check((delivery == .deliver) == readable, "message of \(g), current \(current): \(delivery)")
                    stale = !readable
                case 36..<44:
                    stale = !current.contains(g)
                    action = m.pongReceived(generation: g, ping: m.lastPingID, now: now)
                case 44..<52:
                    stale = !current.contains(g)
                    action = m.greetingSent(generation: g, now: now)
                case 52..<72:
                    action = m.timerFired(now: now)
                case 72..<80:
                    // The side opening or greeted (the steps a handover needs to reach its move).
                    let opening = before.side?.generation ?? g
                    stale = !current.contains(opening)
                    action = fuzzer.chance(50)
                        ? m.transportOpened(generation: opening, now: now) : m.greetingSent(generation: opening, now: now)
                case 80..<88:
                    // A switch of interfaces (most often), or a loss of the path.
                    let usable = fuzzer.chance(90)
                    if usable { interfaces += 1 }
                    let report = PathReport(state: usable ? .available : .unavailable, interfaces: ["if\(interfaces)"])
                    action = m.pathReported(monitor: monitor, report, now: now)
                case 88..<92: action = m.enteredBackground(now: now)
                case 92..<95: action = m.enteredForeground(now: now)
                case 95..<97: action = m.reconnectRequested(now: now)
                default:
                    if case .accepted(_, let next) = m.messageQueued(bytes: 1, expiresAfter: nil, now: now) {
                        action = next
                    }
                }
                var actions = [action]
                while let next = m.followUp() { actions.append(next) }
                var records: [LogRecord] = []
                m.drainRecords { records.append($0) }
                for record in records {
                    if case .handover(let step) = record.event { steps[step, default: 0] += 1 }
                }

                if stale {
                    var after = m.state
                    after.staleEvents -= 1
                    self.check(action == .none && after == before && records.map(\.kind) == [.stale],
                               "a stale event changed the machine: \(action) \(records.map(\.kind))")
                }
                for action in actions {
                    switch action {
                    case .none, .holdReading:
                        break
                    case .openTransport(let opening, _):
                        self.check(opening == m.state.issued && !opened.contains(opening), "open of a used generation")
                        opened.insert(opening)
                    case .closeTransport(let closing, _, _, _):
                        self.check(!closed.contains(closing), "generation \(closing) closed twice")
                        self.check(opened.contains(closing) && !ended.contains(closing), "close of a dead generation")
                        closed.insert(closing)
                    case .sendPing(let pinged, _):
                        self.check(pinged == m.generation && m.state.stage.connection != nil, "ping off the session")
                    case .sendGreeting(let greeting):
                        self.check(greeting == m.generation || greeting == m.state.side?.generation,
                                   "greeting of a generation that is not live")
                    case .writeQueued(let written, let ticket):
                        self.check(written == m.generation && m.phase == .open, "a write off the open session")
                        self.check(inFlight == nil, "two writes in flight")
                        inFlight = (written, ticket)
                    case .writeParkedSend:
                        self.check(false, "a parked send written although none was parked")
                    }
                }
                if let write = inFlight, fuzzer.chance(60) {
                    inFlight = nil
                    let next = m.writeFinished(generation: write.generation, result: .written, now: now)
                    if case .writeQueued(let written, let ticket) = next {
                        self.check(written == m.generation && m.phase == .open, "a write off the open session")
                        inFlight = (written, ticket)
                    }
                }
                // The side is never the session's connection, and is a generation handed out.
                if let side = m.state.side {
                    self.check(side.generation != m.generation && side.generation <= m.state.issued,
                               "side \(side) beside session \(m.generation)")
                }
                self.check(m.phase != .open || m.state.stage.connection?.generation == m.generation,
                           "open on a connection that is not the session's")
                // nextWake is exact: nothing happens before it.
                if let wake = m.nextWake, wake > now {
                    var probe = m
                    let early = probe.timerFired(now: wake - 1)
                    self.check(early == .none && probe.followUp() == nil && probe.state == m.state,
                               "timer acted before nextWake")
                }
            }
            // No connection is left behind: after a stop, every generation opened and not ended was closed.
            var last = [m.stop(now: now + 1)]
            while let next = m.followUp() { last.append(next) }
            for case .closeTransport(let closing, _, _, _) in last { closed.insert(closing) }
            self.check(opened.subtracting(ended).isSubset(of: closed),
                       "left open: \(opened.subtracting(ended).subtracting(closed).sorted())")
        }
        let all: [LogRecord.HandoverStep] = [.opening, .moved, .abandoned, .oldEndedFirst]
        self.check(all.allSatisfy { steps[$0, default: 0] >= 3 }, "steps reached: \(steps)")
    }
}
