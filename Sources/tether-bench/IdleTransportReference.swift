// The same-run reference for `idle.cpu_percent`: what the sockets alone cost at the same connection count.
#if os(Linux)
import Foundation
import Synchronization
import Tether
import TetherPOSIX

/// N bare `SocketTransport` connections on the shared loop, each sending a ping one second after its previous pong
/// (as the client's heartbeat does, with the client's default timer tolerance) from a loop timer, with its events
/// handed to it directly on the loop: the sockets, the WebSocket engine and the loop's timers, without the client
/// (its session machine, log records, events and the consumer task that reads them). The difference between
/// `idle.cpu_percent` and `idle.transport_cpu_percent` is what the client layer adds to a ping cycle.
enum IdleTransportReference {
    /// One connection's pinging, on the loop.
    final class Pinger: Sendable {
        let tally: IdleBench.Tally
        let connection = Mutex<(any TransportConnection)?>(nil)
        let nextID = Atomic<UInt64>(0)

        init(tally: IdleBench.Tally) { self.tally = tally }

        func handle(_ event: TransportEvent) {
            switch event {
            case .opened:
                self.tally.open.add(1, ordering: .relaxed)
                self.tally.changes.yield()
                self.pingLater()
            case .pong:
                self.tally.pongsTotal.add(1, ordering: .relaxed)
                if self.tally.holding.load(ordering: .relaxed) { self.tally.pongs.add(1, ordering: .relaxed) }
                self.pingLater()
            case .ended:
                self.tally.open.subtract(1, ordering: .relaxed)
                self.tally.changes.yield()
                self.connection.withLock { $0 = nil }
            case .message, .pingFailed, .redirected:
                break
            }
        }

        private func pingLater() {
            let loop = EventLoop.shared
            loop.schedule(at: loop.now + .seconds(1), leeway: .milliseconds(10)) { [self] in
                let id = self.nextID.add(1, ordering: .relaxed).newValue
                self.connection.withLock { $0 }?.sendPing(id: id)
            }
        }
    }

    /// Opens `connections` connections to `url`, holds them for `seconds` and returns the process's CPU over the
    /// hold in % of a core, with the pongs seen during the hold and in all (opening and closing included).
    static func measure(
        url: URL, connections: Int, seconds: Int
    ) async throws -> (cpuPercent: Double, pongs: Int, pongsTotal: Int) {
        let loop = EventLoop.shared
        let transport = SocketTransport(loop: loop)
        let (changes, changesSink) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .unbounded)
        let tally = IdleBench.Tally(changes: changesSink)
        var changeIterator = changes.makeAsyncIterator()
        var pingers: [Pinger] = []
        for _ in 0..<connections {
            let pinger = Pinger(tally: tally)
            // Connected on the loop, so the connection is stored before the loop can deliver its first event.
            try await loop.submit {
                let connection = transport.connect(
                    TransportRequest(url: url), deliveringOn: loop, { event in pinger.handle(event) })
                pinger.connection.withLock { $0 = connection }
            }
            pingers.append(pinger)
        }
        try await IdleBench.waitUntil(&changeIterator, tally: tally, timeout: .seconds(60)) {
            tally.open.load(ordering: .relaxed) == connections
        }
        EchoBench.progress("idle: \(connections) transport connections open")  // scripts/idle-profile.sh waits for it
        let clock = ContinuousClock()
        let cpuStart = IdleBench.processCPUSeconds()
        let holdStart = clock.now
        tally.holding.store(true, ordering: .relaxed)
        try await Task.sleep(until: holdStart + .seconds(seconds), clock: clock)
        tally.holding.store(false, ordering: .relaxed)
        let cpuEnd = IdleBench.processCPUSeconds()
        let wall = EchoBench.seconds(holdStart.duration(to: clock.now))
        for pinger in pingers {
            pinger.connection.withLock { $0 }?.close(code: 1000, reason: "")
        }
        try await IdleBench.waitUntil(&changeIterator, tally: tally, timeout: .seconds(30)) {
            tally.open.load(ordering: .relaxed) == 0
        }
        return (
            (cpuEnd - cpuStart) / wall * 100, tally.pongs.load(ordering: .relaxed),
            tally.pongsTotal.load(ordering: .relaxed)
        )
    }
}
#endif
