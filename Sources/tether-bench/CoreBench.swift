import Foundation
import TetherCore

/// `tether-bench core [--events N]`: drives the session machine through a realistic loop (connect, open, messages,
/// ping/pong cycles, drained log records, occasional pong timeouts, refused connects and peer closes, backoff waits)
/// and prints `core.ns_per_event`. Every machine call counts as one event; draining records is part of the cost.
/// The loop allocates nothing per event: `valgrind --tool=memcheck` reports the same heap allocation count for
/// `--events 1000000` and `--events 2000000`.
enum CoreBench {
    static func run(_ arguments: [String]) {
        var events = 10_000_000
        if let index = arguments.firstIndex(of: "--events"), index + 1 < arguments.count,
           let value = Int(arguments[index + 1]), value > 0 {
            events = value
        }
        // Warm up (first-touch, branch predictors), then measure on a fresh machine.
        _ = Self.drive(events: min(events, 1_000_000))
        let clock = ContinuousClock()
        let started = clock.now
        let result = Self.drive(events: events)
        let elapsed = clock.now - started
        let nanoseconds = Double(elapsed.components.seconds) * 1e9 + Double(elapsed.components.attoseconds) / 1e9
        print("core.events \(result.events)")
        print("core.checksum \(result.checksum & 0xFFFF_FFFF)")
        print("core.ns_per_event \((nanoseconds / Double(result.events) * 100).rounded() / 100)")
    }

    /// Runs connection lifetimes until at least `events` machine calls were made.
    static func drive(events: Int) -> (events: Int, checksum: Int) {
        var machine = SessionMachine(configuration: SessionConfiguration(), random: SplitMix64(seed: 42))
        var count = 0
        var checksum = 0
        var now = 0
        var connection = 0
        let monitor = machine.restartPathMonitor()

        @inline(__always) func drain() {
            machine.drainRecords { checksum &+= $0.time &+ $0.generation }
        }
        @inline(__always) func expectOpen(_ action: SessionAction) -> Int {
            guard case .openTransport(let generation, _) = action else {
                fatalError("expected openTransport: \(action)")
            }
            return generation
        }

        _ = machine.pathChanged(monitor: monitor, state: .available, expensive: false, constrained: false,
                                interfacesChanged: false, now: now)
        var generation = expectOpen(machine.start(now: now))
        count += 2
        drain()
        while count < events {
            connection += 1
            now += 25
            if connection % 97 == 0 {
                // The server is down: refused, back off, try again.
                _ = machine.transportEnded(generation: generation, end: .connectFailed(.refused), now: now)
                count += 1
                drain()
                now = machine.retryAt!
                generation = expectOpen(machine.timerFired(now: now))
                count += 1
                drain()
                continue
            }
            _ = machine.transportOpened(generation: generation, now: now)
            count += 1
            drain()
            var ended = false
            for cycle in 0..<32 {
                for message in 0..<8 {
                    now += 1_500
                    _ = machine.messageReceived(generation: generation, bytes: 64 &+ message, now: now)
                    count += 1
                    drain()
                }
                now = machine.nextWake!
                guard case .sendPing(_, let ping) = machine.timerFired(now: now) else { fatalError("expected ping") }
                count += 1
                drain()
                if connection % 50 == 0 && cycle == 7 {
                    // A dead link: no pong, the deadline closes it.
                    now = machine.nextWake!
                    _ = machine.timerFired(now: now)
                    count += 1
                    drain()
                    ended = true
                    break
                }
                now += 40
                _ = machine.pongReceived(generation: generation, ping: ping, now: now)
                count += 1
                drain()
            }
            if !ended {
                _ = machine.transportEnded(generation: generation, end: .peerClosed(code: 1001), now: now)
                count += 1
                drain()
            }
            now = machine.retryAt!
            generation = expectOpen(machine.timerFired(now: now))
            count += 1
            drain()
        }
        return (count, checksum)
    }
}
