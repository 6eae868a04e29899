#if os(Linux)
import Dispatch
import Glibc
import Synchronization
import Testing
@testable import TetherPOSIX

@Suite(.timeLimit(.minutes(1)))
struct EventLoopTests {
    @Test func executeRunsWorkOnTheLoopThreadInSubmissionOrder() async throws {
        let loop = try EventLoop(name: "test-execute")
        defer { loop.shutdown() }
        #expect(!loop.inEventLoop)
        let (stream, continuation) = AsyncStream.makeStream(of: (Int, Bool).self)
        for index in 0..<100 {
            loop.execute { continuation.yield((index, loop.inEventLoop)) }
        }
        var seen: [Int] = []
        for await (index, onLoop) in stream {
            #expect(onLoop)
            seen.append(index)
            if seen.count == 100 { break }
        }
        #expect(seen == Array(0..<100))
    }

    @Test func workDeferredToTheEndOfATurnRunsThereInOrderWithWhatItDefers() async throws {
        let loop = try EventLoop(name: "test-end-of-turn")
        defer { loop.shutdown() }
        let (stream, continuation) = AsyncStream.makeStream(of: (String, Bool).self)
        loop.execute {
            loop.atEndOfTurn {
                continuation.yield(("end 1", loop.inEventLoop))
                loop.atEndOfTurn { continuation.yield(("end 3", loop.inEventLoop)) }
            }
            loop.atEndOfTurn { continuation.yield(("end 2", loop.inEventLoop)) }
            continuation.yield(("work", loop.inEventLoop))
        }
        var seen: [String] = []
        for await (name, onLoop) in stream {
            #expect(onLoop)
            seen.append(name)
            if seen.count == 4 { break }
        }
        #expect(seen == ["work", "end 1", "end 2", "end 3"])
    }

    @Test func submitReturnsTheResultComputedOnTheLoop() async throws {
        let loop = try EventLoop(name: "test-submit")
        defer { loop.shutdown() }
        let result = try await loop.submit { loop.inEventLoop ? 42 : -1 }
        #expect(result == 42)
    }

    @Test func timersFireInDeadlineOrderThenSchedulingOrder() async throws {
        let loop = try EventLoop(name: "test-timers")
        defer { loop.shutdown() }
        let (stream, continuation) = AsyncStream.makeStream(of: String.self)
        let base = ContinuousClock.now + .milliseconds(20)
        loop.schedule(at: base + .milliseconds(20)) { continuation.yield("c") }
        loop.schedule(at: base) { continuation.yield("a1") }
        loop.schedule(at: base + .milliseconds(10)) { continuation.yield("b") }
        loop.schedule(at: base) { continuation.yield("a2") }
        var order: [String] = []
        for await name in stream {
            order.append(name)
            if order.count == 4 { break }
        }
        #expect(order == ["a1", "a2", "b", "c"])
    }

    @Test func timerNeverFiresBeforeItsDeadline() async throws {
        let loop = try EventLoop(name: "test-early")
        defer { loop.shutdown() }
        let (stream, continuation) = AsyncStream.makeStream(of: Bool.self)
        for delay in [1, 2, 5, 15] {
            let deadline = ContinuousClock.now + .milliseconds(delay)
            loop.schedule(at: deadline) { continuation.yield(ContinuousClock.now >= deadline && loop.inEventLoop) }
        }
        var results: [Bool] = []
        for await onTime in stream {
            results.append(onTime)
            if results.count == 4 { break }
        }
        #expect(results == [true, true, true, true])
    }

    @Test func timerScheduledFromAnotherThreadBeforeTheLoopsOwnWakeUpWakesTheLoop() async throws {
        let loop = try EventLoop(name: "test-wake-early")
        defer { loop.shutdown() }
        let (stream, continuation) = AsyncStream.makeStream(of: String.self)
        // The loop sleeps until its own timer, a minute away (far enough that no load on this thread between the two
        // schedules can let it come first: with 2 s, a loaded TSan run did)...
        let own = try await loop.submit { loop.schedule(after: .seconds(60)) { continuation.yield("own") } }
        // ...and a timer due sooner, scheduled from this thread, must wake it: without a wake-up it would be
        // added only when the loop wakes for its own timer, and fire after it.
        loop.schedule(after: .milliseconds(20)) { continuation.yield("sooner") }
        var iterator = stream.makeAsyncIterator()
        #expect(await iterator.next() == "sooner")
        own.cancel()
    }

    @Test func timerScheduledFromAnotherThreadAfterTheLoopsOwnWakeUpFiresOnTimeAndInOrder() async throws {
        let loop = try EventLoop(name: "test-wake-late")
        defer { loop.shutdown() }
        let (stream, continuation) = AsyncStream.makeStream(of: String.self)
        let start = ContinuousClock.now
        _ = try await loop.submit { loop.schedule(at: start + .milliseconds(30)) { continuation.yield("own") } }
        // Due after the loop's own wake-up: added to the heap then, without waking the loop now.
        let later = start + .milliseconds(60)
        loop.schedule(at: later) { continuation.yield(ContinuousClock.now >= later ? "later" : "later, early") }
        var order: [String] = []
        for await name in stream {
            order.append(name)
            if order.count == 2 { break }
        }
        #expect(order == ["own", "later"])
    }

    @Test func cancelledTimerNeverRunsAndCancelReportsWhetherItStoppedTheWork() async throws {
        let loop = try EventLoop(name: "test-cancel")
        defer { loop.shutdown() }
        let (stream, continuation) = AsyncStream.makeStream(of: String.self)
        let cancelled = loop.schedule(afterMilliseconds: 5) { continuation.yield("cancelled timer ran") }
        let fired = loop.schedule(afterMilliseconds: 1) { continuation.yield("fired") }
        #expect(cancelled.cancel())
        #expect(!cancelled.cancel())
        loop.schedule(afterMilliseconds: 20) { continuation.yield("sentinel") }
        var seen: [String] = []
        for await name in stream {
            seen.append(name)
            if name == "sentinel" { break }
        }
        #expect(seen == ["fired", "sentinel"])
        #expect(!fired.cancel())
    }

    /// On a manual clock: on the real one, a loop slower than a millisecond between the two `schedule` calls (under
    /// ThreadSanitizer) made the 1 ms timer due before the 0 ms one, which then found it run.
    @Test func timerCanBeCancelledFromTheLoopBeforeItIsDue() async throws {
        let clock = ManualLoopClock()
        let loop = try EventLoop(name: "test-cancel-loop", clock: .manual(clock))
        defer { loop.shutdown() }
        let (stream, continuation) = AsyncStream.makeStream(of: String.self)
        loop.execute {
            let timer = loop.schedule(afterMilliseconds: 1) { continuation.yield("cancelled timer ran") }
            loop.schedule(afterMilliseconds: 0) { continuation.yield(timer.cancel() ? "cancelled" : "too late") }
            loop.schedule(afterMilliseconds: 10) { continuation.yield("sentinel") }
        }
        await loop.settle()  // the 0 ms timer is due at once, the others wait for the clock
        clock.advance(by: .milliseconds(10))
        var seen: [String] = []
        for await name in stream {
            seen.append(name)
            if name == "sentinel" { break }
        }
        #expect(seen == ["cancelled", "sentinel"])
    }

    /// A `LoopTimer` fires only its latest arming, once, whether it was moved earlier or later, and never after a
    /// cancel; armed or cancelled from another thread, it does the same on the loop's next turn.
    @Test func aLoopTimerFiresOnlyItsLatestArmingAndNeverAfterACancel() async throws {
        let clock = ManualLoopClock()
        let loop = try EventLoop(name: "test-looptimer", clock: .manual(clock))
        defer { loop.shutdown() }
        let fired = Mutex<[Duration]>([])
        let timer = loop.makeTimer { fired.withLock { $0.append(clock.elapsed) } }
        let origin = clock.now
        try await loop.submit {
            timer.arm(at: origin + .milliseconds(100))
            timer.arm(at: origin + .milliseconds(20))  // earlier: the first arming is gone
            timer.arm(at: origin + .milliseconds(50))  // later again
        }
        clock.advance(by: .milliseconds(40))
        await loop.settle()
        #expect(fired.withLock { $0 }.isEmpty)
        clock.advance(by: .milliseconds(100))
        await loop.settle()
        #expect(fired.withLock { $0 } == [.milliseconds(140)])
        #expect(!timer.isArmed)

        try await loop.submit { timer.arm(at: origin + .milliseconds(200)) }
        timer.cancel()  // from this thread
        #expect(!timer.isArmed)
        clock.advance(by: .milliseconds(100))
        await loop.settle()
        #expect(fired.withLock { $0 }.count == 1)

        timer.arm(at: origin + .milliseconds(300))  // from this thread
        #expect(timer.isArmed)
        clock.advance(by: .milliseconds(100))
        await loop.settle()
        #expect(fired.withLock { $0 } == [.milliseconds(140), .milliseconds(340)])
    }

    @Test func shutdownRunsQueuedWorkRefusesLaterWorkAndReleasesItsDescriptors() async throws {
        let loop = try EventLoop(name: "test-shutdown")
        #expect(loop.ownedDescriptorCount == 2)
        let ran = Atomic<Int>(0)
        for _ in 0..<10 { loop.execute { ran.add(1, ordering: .relaxed) } }
        let neverRuns = loop.schedule(after: .seconds(60)) { ran.add(100, ordering: .relaxed) }
        loop.shutdown()
        #expect(ran.load(ordering: .relaxed) == 10)
        #expect(!loop.execute { ran.add(1000, ordering: .relaxed) })
        #expect(!neverRuns.cancel())  // released at shutdown
        #expect(loop.ownedDescriptorCount == 0)
        await #expect(throws: SocketError.closed) { try await loop.submit { 1 } }
        loop.shutdown()  // idempotent
    }

    @Test func sharedLoopIsRunning() async throws {
        #expect(try await EventLoop.shared.submit { EventLoop.shared.inEventLoop })
    }
}

extension EventLoopTests {
    @Test func aShutDownLoopNeverWritesToItsOldWakeDescriptor() throws {
        let loop = try EventLoop(name: "test-stalewake")
        let staleWake = loop.wakeDescriptor
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer { close(ends[0]); close(ends[1]) }
        loop.shutdown()
        // Give the freed number to the pipe's write end, then poke the dead loop every way we can.
        let standIn = fcntl(ends[1], F_DUPFD_CLOEXEC, staleWake)
        defer { if standIn >= 0 { close(standIn) } }
        // A test running in parallel may take the number first; then there is nothing to observe.
        guard standIn == staleWake else { return }
        loop.shutdown()
        #expect(!loop.execute {})
        loop.schedule(afterMilliseconds: 0) {}
        _ = fcntl(ends[0], F_SETFL, O_NONBLOCK)
        var byte: UInt8 = 0
        #expect(read(ends[0], &byte, 1) == -1 && errno == EAGAIN)
    }
}

extension EventLoopTests {
    /// A loop made to spin (work that queues the next piece of work, turn after turn, so that it never sleeps) is
    /// counted by `wakeUps`, the counter the idle tests assert stays still: each turn runs at most
    /// `taskRoundsPerTurn` rounds of queued work, so a chain of 200 steps takes at least 200 / 4 turns, each one a
    /// return from `epoll_wait` (with a zero timeout, as work is queued). A counter of sleeping returns only saw one.
    @Test func aSpinningLoopIsCountedTurnByTurn() async throws {
        let loop = try EventLoop(name: "test-spin")
        defer { loop.shutdown() }
        await loop.settle()
        let before = loop.wakeUps
        let steps = 200
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            @Sendable func step(_ left: Int) {
                guard left > 0 else { return done.resume() }
                loop.execute { step(left - 1) }
            }
            loop.execute { step(steps) }
        }
        let turns = loop.wakeUps - before
        #expect(turns >= steps / EventLoop.taskRoundsPerTurn, "\(steps) chained steps counted as \(turns) turns")
    }

    /// Work queued from another thread while the loop is awake is taken in that turn, and leaves no wake-up behind:
    /// the loop then sleeps. It wrote the eventfd whenever none was pending, so that work queued during a turn left
    /// a wake-up that returned the next `epoll_wait` at once with nothing to do (what made the client's idle test fail
    /// about one run in eight). Work queued while the loop sleeps still wakes it (every other test).
    @Test func workQueuedWhileTheLoopIsAwakeLeavesNoWakeUpBehind() async throws {
        let loop = try EventLoop(name: "test-awake")
        defer { loop.shutdown() }
        await loop.settle()
        let (running, runningSink) = AsyncStream.makeStream(of: Void.self)
        let (counted, countedSink) = AsyncStream.makeStream(of: Int.self)
        let release = DispatchSemaphore(value: 0)
        // The first piece of work holds the loop in its turn until the second has been queued.
        loop.execute {
            runningSink.yield()
            release.wait()
        }
        var runningIterator = running.makeAsyncIterator()
        _ = await runningIterator.next()
        loop.execute { countedSink.yield(loop.wakeUps) }  // read in the turn the work came in
        release.signal()
        var countedIterator = counted.makeAsyncIterator()
        let inTurn = try #require(await countedIterator.next())
        // The span observed, not a synchronisation: a wake-up left behind returns at once; none comes later.
        try await Task.sleep(for: .milliseconds(300))
        #expect(loop.wakeUps == inTurn, "the loop woke \(loop.wakeUps - inTurn) times with nothing to do")
    }

    @Test func timersWithOverlappingLeewayFireOnOneWakeUpAndNeverEarly() async throws {
        let loop = try EventLoop(name: "test-leeway")
        defer { loop.shutdown() }
        let (stream, continuation) = AsyncStream.makeStream(of: (Int, ContinuousClock.Instant).self)
        let base = ContinuousClock.now + .milliseconds(60)
        // The first timer may wait 40 ms; the second is due 10 ms after it, so both fire on one wake-up.
        loop.schedule(at: base, leeway: .milliseconds(40)) { continuation.yield((1, .now)) }
        loop.schedule(at: base + .milliseconds(10)) { continuation.yield((2, .now)) }
        var fired: [(Int, ContinuousClock.Instant)] = []
        for await event in stream {
            fired.append(event)
            if fired.count == 2 { break }
        }
        #expect(fired.map(\.0) == [1, 2])
        #expect(fired[0].1 >= base + .milliseconds(10), "the first waited for the second, within its leeway")
        #expect(fired[1].1 >= base + .milliseconds(10))
    }

    @Test func aTaskPreferringTheLoopRunsOnItsThread() async throws {
        let loop = try EventLoop(name: "test-executor")
        let onLoop = await Task(executorPreference: loop.taskExecutor) { loop.inEventLoop }.value
        #expect(onLoop)
        let nested = await withTaskExecutorPreference(loop.taskExecutor) { () async -> Bool in
            await Task.yield()
            return loop.inEventLoop
        }
        #expect(nested)
        loop.shutdown()
        // A job for a loop that has shut down moves to the global pool instead of being lost.
        let afterShutdown = await Task(executorPreference: loop.taskExecutor) { loop.inEventLoop }.value
        #expect(!afterShutdown)
    }
}

extension EventLoopTests {
    /// A consumer on the loop (`client.eventExecutor`) calls nonisolated async code all the time (`send`, an event
    /// iterator's `next`): entering and leaving it must not cost a job through the loop each time. It did while one
    /// object was both the loop's serial and task executor: 16 hops per echoed message.
    @Test func aTaskPreferringTheLoopCallsNonisolatedCodeWithoutHops() async throws {
        let loop = try EventLoop(name: "test-hops")
        defer { loop.shutdown() }
        let (before, after, onLoop) = await Task(executorPreference: loop.taskExecutor) { () async -> (Int, Int, Bool) in
            let before = loop.workRun
            var onLoop = true
            for _ in 0..<100 {
                onLoop = await nonisolatedStep(loop) && onLoop
            }
            return (before, loop.workRun, onLoop)
        }.value
        #expect(onLoop, "the nonisolated code ran on the loop's thread")
        #expect(after - before < 10, "100 calls of nonisolated async code ran \(after - before) jobs on the loop")
    }
}

/// Nonisolated async code that never suspends: calling it from a task on the loop needs no hop.
@inline(never)
private nonisolated func nonisolatedStep(_ loop: EventLoop) async -> Bool {
    loop.inEventLoop
}

/// An actor that runs on an event loop, as the client does.
private actor LoopActor {
    let loop: EventLoop
    private(set) var calls: [Int] = []

    init(loop: EventLoop) { self.loop = loop }

    nonisolated var unownedExecutor: UnownedSerialExecutor { self.loop.asUnownedSerialExecutor() }

    func record(_ value: Int) -> Bool {
        self.calls.append(value)
        return self.loop.inEventLoop
    }
}

extension EventLoopTests {
    @Test func anActorOnTheLoopRunsThereAndLoopCallbacksEnterItDirectly() async throws {
        let loop = try EventLoop(name: "test-serial")
        let actor = LoopActor(loop: loop)
        #expect(await actor.record(1))
        // A loop callback (here a timer) is on the actor's executor, so it may enter synchronously.
        let entered: Bool = await withCheckedContinuation { continuation in
            loop.schedule(after: .milliseconds(1)) {
                let onLoop = actor.assumeIsolated { isolated in isolated.record(2) }
                continuation.resume(returning: onLoop)
            }
        }
        #expect(entered)
        loop.shutdown()
        // After shutdown the actor's jobs still run, one at a time, off the loop.
        await withTaskGroup(of: Bool.self) { group in
            for value in 3..<13 {
                group.addTask { await actor.record(value) }
            }
            for await onLoop in group {
                #expect(!onLoop)
            }
        }
        #expect(await actor.calls.sorted() == Array(1..<13))
    }
}
#endif
