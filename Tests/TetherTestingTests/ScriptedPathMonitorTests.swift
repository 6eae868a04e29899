import Foundation
import Synchronization
import Testing
import Tether
import TetherTesting

/// Collects deliveries in order, for monitors that deliver on the caller's thread.
final class DeliveryLog: Sendable {
    private let entries = Mutex<[PathSnapshot]>([])

    var snapshots: [PathSnapshot] { self.entries.withLock { $0 } }

    func record(_ snapshot: PathSnapshot) {
        self.entries.withLock { $0.append(snapshot) }
    }
}

@Suite struct ScriptedPathMonitorTests {
    static let wifi = PathSnapshot(status: .satisfied, interfaces: [.wifi])
    static let cellular = PathSnapshot(status: .satisfied, isExpensive: true, interfaces: [.cellular])
    static let offline = PathSnapshot(status: .unsatisfied)

    @Test func startDeliversTheCurrentSnapshot() {
        let monitor = ScriptedPathMonitor(current: Self.wifi)
        let log = DeliveryLog()
        monitor.start(log.record)
        #expect(log.snapshots == [Self.wifi])
        #expect(monitor.isStarted && !monitor.isCancelled)
    }

    @Test func withoutACurrentSnapshotStartDeliversNothingUntilTheFirstChange() {
        let monitor = ScriptedPathMonitor()
        let log = DeliveryLog()
        monitor.start(log.record)
        #expect(log.snapshots.isEmpty)
        monitor.deliver(Self.offline)
        #expect(log.snapshots == [Self.offline])
    }

    @Test func snapshotsBeforeStartAreRememberedNotQueued() {
        let monitor = ScriptedPathMonitor(current: Self.wifi)
        monitor.deliver(Self.offline)
        monitor.deliver(Self.cellular)
        let log = DeliveryLog()
        monitor.start(log.record)
        #expect(log.snapshots == [Self.cellular])
    }

    @Test func repeatsAreFilteredAndChangesDelivered() {
        let monitor = ScriptedPathMonitor(current: Self.wifi)
        let log = DeliveryLog()
        monitor.start(log.record)
        monitor.deliver(Self.wifi)
        monitor.deliver(Self.offline)
        monitor.deliver(Self.offline)
        monitor.deliver(Self.wifi)
        #expect(log.snapshots == [Self.wifi, Self.offline, Self.wifi])
    }

    @Test func repeatsAreDeliveredWhenFilteringIsOff() {
        let monitor = ScriptedPathMonitor(current: Self.wifi, filtersRepeats: false)
        let log = DeliveryLog()
        monitor.start(log.record)
        monitor.deliver(Self.wifi)
        #expect(log.snapshots == [Self.wifi, Self.wifi])
    }

    @Test func nothingIsDeliveredAfterCancel() {
        let monitor = ScriptedPathMonitor(current: Self.wifi)
        let log = DeliveryLog()
        monitor.start(log.record)
        monitor.cancel()
        monitor.deliver(Self.offline)
        monitor.cancel()
        #expect(log.snapshots == [Self.wifi])
        #expect(monitor.isCancelled)
    }

    @Test func cancelledMonitorCannotRestart() {
        let monitor = ScriptedPathMonitor(current: Self.wifi)
        monitor.cancel()
        let log = DeliveryLog()
        monitor.start(log.record)
        monitor.deliver(Self.offline)
        #expect(log.snapshots.isEmpty)
    }

    @Test func secondStartIsIgnored() {
        let monitor = ScriptedPathMonitor(current: Self.wifi)
        let first = DeliveryLog()
        let second = DeliveryLog()
        monitor.start(first.record)
        monitor.start(second.record)
        monitor.deliver(Self.offline)
        #expect(first.snapshots == [Self.wifi, Self.offline])
        #expect(second.snapshots.isEmpty)
    }

    @Test func cancelFromAnotherThreadWaitsForTheDeliveryInProgressAndStopsTheRest() {
        let monitor = ScriptedPathMonitor(current: Self.wifi)
        let log = DeliveryLog()
        let handlerEntered = DispatchSemaphore(value: 0)
        let cancelReturned = DispatchSemaphore(value: 0)
        monitor.start { snapshot in
            if snapshot == Self.offline {
                handlerEntered.signal()
                // `cancel()` must not return while this call runs, so this wait runs out (50 ms) and the record
                // below happens before `cancel()` returns. A `cancel()` that did not wait would signal first.
                _ = cancelReturned.wait(timeout: .now() + .milliseconds(50))
            }
            log.record(snapshot)
        }
        let deliveringThreadDone = DispatchSemaphore(value: 0)
        Thread {
            monitor.deliver(Self.offline)
            monitor.deliver(Self.cellular)
            deliveringThreadDone.signal()
        }.start()
        handlerEntered.wait()
        monitor.cancel()
        let deliveredWhenCancelReturned = log.snapshots
        cancelReturned.signal()
        deliveringThreadDone.wait()
        // The cellular delivery may win the race for the lock against `cancel()`; it is then before the return.
        #expect(deliveredWhenCancelReturned.starts(with: [Self.wifi, Self.offline]))
        #expect(log.snapshots == deliveredWhenCancelReturned)
    }

    @Test func handlerMayCancelItsOwnMonitor() {
        let monitor = ScriptedPathMonitor(current: Self.wifi)
        let log = DeliveryLog()
        monitor.start { snapshot in
            log.record(snapshot)
            if snapshot == Self.offline { monitor.cancel() }
        }
        monitor.deliver(Self.offline)
        monitor.deliver(Self.cellular)
        #expect(log.snapshots == [Self.wifi, Self.offline])
    }
}
