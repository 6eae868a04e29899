import Foundation
import Testing
import Tether
import TetherCore
@testable import TetherTesting

/// The recorder a test waits on: it must return the right event, never hang, and never miss one.
@Suite struct EventRecorderTests {
    func record(_ event: LogRecord.Event, generation: Int = 1, time: Int = 0) -> WebSocketEvent {
        .record(LogRecord(generation: generation, time: time, from: .open, to: .open, event: event))
    }

    func state(_ phase: SessionPhase) -> WebSocketEvent {
        .stateChanged(ConnectionState(
            phase: phase, generation: 1, attempts: 0, retryAt: nil, failure: nil, lastRTT: nil, path: .unknown
        ), cause: nil)
    }

    @Test func nextReadsForwardPastWhatDoesNotMatch() async throws {
        let (events, sink) = AsyncStream.makeStream(of: WebSocketEvent.self)
        let recorder = EventRecorder(events)
        sink.yield(self.state(.connecting))
        sink.yield(self.record(.ping, time: 1))
        sink.yield(.message(.text("a"), generation: 1))
        sink.yield(self.record(.ping, time: 2))
        sink.yield(self.state(.open))
        #expect(await recorder.record(.ping)?.time == 1)
        #expect(await recorder.message() == .text("a"))
        // The state change into .open comes after the second ping: reading it passes the ping by.
        #expect(await recorder.state(.open)?.phase == .open)
        sink.yield(self.record(.ping, time: 3))
        #expect(await recorder.record(.ping)?.time == 3)
        #expect(recorder.events.count == 6)
    }

    @Test func nextWaitsForAnEventStillToCome() async throws {
        let (events, sink) = AsyncStream.makeStream(of: WebSocketEvent.self)
        let recorder = EventRecorder(events)
        async let pong = recorder.record(.pong) { $0.generation == 2 }
        for generation in 1...3 {
            sink.yield(self.record(.pong(rtt: 1), generation: generation, time: generation * 10))
        }
        #expect(await pong?.time == 20)
    }

    @Test func waitSeesWhatWasAlreadyRecordedAndWhatComesLater() async throws {
        let (events, sink) = AsyncStream.makeStream(of: WebSocketEvent.self)
        let recorder = EventRecorder(events)
        sink.yield(self.record(.opened))
        sink.yield(.message(.binary(Data([1, 2])), generation: 1))
        let now = try #require(await recorder.wait { $0.records.count == 1 && $0.messages.count == 1 })
        #expect(now.records.map(\.kind) == [.opened] && now.messages == [.binary(Data([1, 2]))])

        async let later = recorder.wait { $0.messages.count == 1_000 }
        for index in 0..<1_000 {
            sink.yield(.message(.text("\(index)"), generation: 1))
        }
        // The binary message counts too: the condition holds at the 999th text message.
        let snapshot = try #require(await later)
        #expect(snapshot.messages.count == 1_000 && snapshot.events.count == 1_001)
        #expect(snapshot.messages.last == .text("998"))
    }

    @Test func aFinishedStreamEndsEveryWaitWithoutAMatch() async throws {
        let (events, sink) = AsyncStream.makeStream(of: WebSocketEvent.self)
        let recorder = EventRecorder(events)
        async let pong = recorder.record(.pong)
        async let closed = recorder.wait { $0.records.contains { $0.kind == .closed } }
        sink.yield(self.record(.ping))
        sink.finish()
        #expect(await pong == nil)
        #expect(await closed == nil)
        #expect(recorder.snapshot.isFinished)
        // What already holds is still returned after the end.
        #expect(await recorder.wait { $0.records.count == 1 }?.isFinished == true)
    }

    @Test func aTimeoutEndsAWaitForSomethingThatNeverComes() async throws {
        let (events, sink) = AsyncStream.makeStream(of: WebSocketEvent.self)
        let recorder = EventRecorder(events)
        #expect(await recorder.record(.pong, timeout: .milliseconds(20)) == nil)
        #expect(await recorder.wait(timeout: .milliseconds(20)) { $0.events.count == 1 } == nil)
        // The recorder keeps working after a timed-out wait.
        sink.yield(self.record(.pong(rtt: 1)))
        #expect(await recorder.record(.pong)?.kind == .pong)
    }

    @Test func aZeroTimeoutAnswersFromWhatIsAlreadyRecorded() async throws {
        let (events, sink) = AsyncStream.makeStream(of: WebSocketEvent.self)
        let recorder = EventRecorder(events)
        sink.yield(self.record(.ping))
        #expect(await recorder.record(.ping) != nil)  // recorded now
        #expect(await recorder.wait(timeout: .zero) { $0.events.count == 1 } != nil)
        // Not true now: nil at once, whatever comes later (no guard task to wait for).
        #expect(await recorder.wait(timeout: .zero) { $0.events.count == 2 } == nil)
        sink.yield(self.record(.pong(rtt: 1)))
        #expect(await recorder.record(.pong)?.kind == .pong)
    }

    @Test func cancellingTheWaitingTaskEndsItsWaitAtOnce() async throws {
        let (events, sink) = AsyncStream.makeStream(of: WebSocketEvent.self)
        let recorder = EventRecorder(events)
        // Timeouts far beyond the deadline below: a wait that ignored cancellation would fail the expectation
        // (after 30 s, when the timeout finally ends it).
        let waiting = Task { await recorder.record(.pong, timeout: .seconds(30)) }
        let conditional = Task { await recorder.wait(timeout: .seconds(30)) { $0.events.count == 5 } }
        waiting.cancel()
        conditional.cancel()
        let ended = await withDeadline(.seconds(5)) { () async -> Bool? in
            let pong = await waiting.value
            let snapshot = await conditional.value
            return pong == nil && snapshot == nil
        }
        #expect(ended == true)
        // A task cancelled before it waits returns at once as well.
        let early = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await recorder.state(.open, timeout: .seconds(30))
        }
        #expect(await withDeadline(.seconds(5)) { () async -> Bool? in await early.value == nil } == true)
        sink.yield(self.record(.pong(rtt: 1)))
        #expect(await recorder.record(.pong) != nil)
    }
}
