import Testing
import TetherCore

/// The assertion block of the original heartbeat specification (docs/ARCHITECTURE.md §3), verbatim.
extension HeartbeatTests {
    @Test func seedAssertionBlockPassesUnchanged() {
        var h = Heartbeat(interval: 100, timeout: 1000)
        let first = h.connect()
        h.opened(first, now: 0)

        precondition(h.tick(now: 99) == nil)
        precondition(h.tick(now: 100) == .ping(first))
        precondition(h.tick(now: 1099) == nil)
        h.pong(first, now: 1100)
        precondition(h.tick(now: 1100) == .close(first))

        let second = h.connect()
        h.opened(first, now: 1200)
        precondition(h.phase == .connecting)
        h.opened(second, now: 2000)
        precondition(h.tick(now: 2100) == .ping(second))

        h.pong(first, now: 2150)
        precondition(h.tick(now: 3100) == .close(second))

        let third = h.connect()
        h.opened(third, now: 4000)
        precondition(h.tick(now: 4100) == .ping(third))
        h.pong(third, now: 4200)
        precondition(h.tick(now: 4299) == nil)
        precondition(h.tick(now: 4300) == .ping(third))
    }
}
