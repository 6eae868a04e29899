import Synchronization
import Testing
@testable import Tether

/// The rules `NWPathMonitorAdapter` relies on, on a fake monitor: `NWPathMonitor` runs at most once.
@Suite struct OneShotLifecycleTests {
    private final class FakeMonitor: Sendable {
        let id: Int
        init(id: Int) { self.id = id }
    }

    @Test func aSecondStartMakesNothingAndCancelHandsBackTheRunningMonitorOnce() {
        let lifecycle = OneShotLifecycle<FakeMonitor>()
        let made = Atomic<Int>(0)
        let first = lifecycle.start { made.add(1, ordering: .relaxed); return FakeMonitor(id: 1) }
        let second = lifecycle.start { made.add(1, ordering: .relaxed); return FakeMonitor(id: 2) }
        #expect(first?.id == 1 && second == nil)
        #expect(made.load(ordering: .relaxed) == 1)
        #expect(lifecycle.cancel()?.id == 1)
        #expect(lifecycle.cancel() == nil)  // cancelled once; a second cancel has nothing to cancel
    }

    @Test func aCancelledLifecycleNeverStartsAgain() {
        let lifecycle = OneShotLifecycle<FakeMonitor>()
        #expect(lifecycle.cancel() == nil)  // cancelled before it ran
        var made = false
        #expect(lifecycle.start { made = true; return FakeMonitor(id: 1) } == nil)
        #expect(!made)
    }
}
