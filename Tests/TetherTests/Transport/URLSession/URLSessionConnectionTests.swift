import Foundation
import Testing
import TetherCore
@testable import Tether
import TetherTesting
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Each trap of `URLSessionWebSocketTask` (docs/ARCHITECTURE.md §7) that the connection claims to handle, played by a
/// scripted task on any platform.
@Suite struct URLSessionConnectionTests {
    /// One connection over a scripted task, with a manual clock for its close timeout.
    struct Harness {
        let clock = ManualClock()
        let factory = ScriptedWebSocketTaskFactory()
        let connection: any TransportConnection
        var task: ScriptedWebSocketTask { self.factory.tasks[0] }

        init(
            url: String = "wss://example.test/feed", closeTimeout: Int = 2_000, maximumMessageSize: Int = 16 << 20,
            maximumRedirects: Int = 5, proxy: ProxyConfiguration = .none
        ) {
            let transport = URLSessionTransport(factory: self.factory, clock: self.clock)
            self.connection = transport.connect(
                TransportRequest(
                    url: URL(string: url)!, headers: [(name: "Authorization", value: "Bearer t")],
                    subprotocols: ["chat", "v2"], maximumMessageSize: maximumMessageSize, connectTimeout: .seconds(4),
                    closeTimeout: .milliseconds(closeTimeout), proxy: proxy, maximumRedirects: maximumRedirects
                )
            )
        }

        /// Every event up to the end of the stream (which finishes after `.ended`); nil if it has not ended within
        /// the guard's 10 s.
        func events() async -> [Seen]? {
            let events = self.connection.events
            return await withDeadline {
                var seen: [Seen] = []
                for await event in events {
                    seen.append(Seen(event))
                }
                return seen
            }
        }
    }

    // MARK: Opening

    @Test func theTaskGetsTheMessageSizeLimitBeforeItStartsAndAReceiveAtOnce() {
        let harness = Harness(maximumMessageSize: 5 << 20)
        #expect(harness.task.calls == [.setMaximumMessageSize(5 << 20), .resume, .receive])
        #expect(harness.task.maximumMessageSize == 5 << 20)  // not the platform's 1 MiB default
        let request = harness.factory.requests[0]
        #expect(request.url?.absoluteString == "wss://example.test/feed")
        #expect(request.value(forHTTPHeaderField: "Authorization") == "Bearer t")
        #expect(request.value(forHTTPHeaderField: "Sec-WebSocket-Protocol") == "chat, v2")
        #expect(request.timeoutInterval == 4)
    }

    @Test func aSchemeOtherThanWebSocketMakesNoTask() async {
        let harness = Harness(url: "http://example.test/")
        #expect(harness.factory.tasks.isEmpty)
        #expect(await harness.events() == [.ended(.connectFailed(.unsupported))])
    }

    @Test func aRejectedHandshakeEndsWithItsStatusAndRetryAfter() async {
        let harness = Harness()
        harness.task.setResponse(status: 429, headers: ["Retry-After": "7"])
        harness.task.complete(error: URLError(.badServerResponse))
        #expect(await harness.events() == [.ended(.handshakeRejected(status: 429, retryAfter: 7_000))])
    }

    // MARK: The receive loop

    @Test func receiveIsArmedAgainAfterEveryMessage() async {
        let harness = Harness()
        let task = harness.task
        task.open(subprotocol: "chat")
        #expect(task.deliver(.string("one")))
        #expect(task.pendingReceiveCount == 1)
        #expect(task.deliver(.data(Data([1, 2, 3]))))
        #expect(task.pendingReceiveCount == 1)
        #expect(task.deliver(.string("three")))
        #expect(task.pendingReceiveCount == 1)
        #expect(task.count(.receive) == 4)
        task.peerClosed(code: 1000)
        task.complete()
        #expect(await harness.events() == [
            .opened("chat"), .text("one"), .binary(Data([1, 2, 3])), .text("three"),
            .ended(.peerClosed(code: 1000)),
        ])
    }

    @Test func noReceiveIsArmedWhileReadingIsHeldAndOneIsWhenItResumes() async {
        let harness = Harness()
        let task = harness.task
        task.open()
        harness.connection.holdReading(true)
        #expect(task.pendingReceiveCount == 1)  // armed before the hold: the platform cannot take it back
        harness.connection.holdReading(false)
        #expect(task.count(.receive) == 1)  // a hold with no message in between arms nothing more

        harness.connection.holdReading(true)
        #expect(task.deliver(.string("held")))  // still delivered: the hold stops the next read, not this one
        #expect(task.pendingReceiveCount == 0)
        harness.connection.holdReading(true)
        #expect(task.pendingReceiveCount == 0)
        harness.connection.holdReading(false)
        #expect(task.pendingReceiveCount == 1)
        harness.connection.holdReading(false)
        #expect(task.count(.receive) == 2)  // resuming twice arms one receive
        #expect(task.deliver(.string("after")))
        #expect(task.pendingReceiveCount == 1)
        task.complete(error: URLError(.networkConnectionLost))
        #expect(await harness.events() == [
            .opened(nil), .text("held"), .text("after"), .ended(.receiveFailed),
        ])
    }

    @Test func aReceiveThatNeverCompletesLeavesTheEndToDidComplete() async {
        let harness = Harness()
        let task = harness.task
        task.open()
        // TCP dies: the pending receive never completes; the task's completion is the terminal event.
        task.complete(error: URLError(.networkConnectionLost))
        #expect(await harness.events() == [.opened(nil), .ended(.receiveFailed)])
        // The receive fails late, and the platform repeats its completion: nothing more, nothing re-armed.
        #expect(task.completeReceive(.failure(URLError(.networkConnectionLost))))
        task.complete(error: URLError(.cancelled))
        #expect(task.count(.receive) == 1)
        #expect(task.count(.invalidateSession) == 1)
    }

    @Test func aReceiveFailureIsNotTheEnd() async {
        let harness = Harness()
        let task = harness.task
        task.open()
        #expect(task.completeReceive(.failure(URLError(.networkConnectionLost))))
        task.peerClosed(code: 1001)
        task.complete()
        #expect(await harness.events() == [.opened(nil), .ended(.peerClosed(code: 1001))])
    }

    // MARK: Pings

    @Test func aPingCompletionRunTwiceReportsOnce() async {
        let harness = Harness()
        let task = harness.task
        task.open()
        harness.connection.sendPing(id: 1)
        harness.connection.sendPing(id: 2)
        task.completePing(0)
        task.completePing(0)
        task.completePing(1, error: URLError(.networkConnectionLost))
        task.completePing(1)
        task.complete(error: URLError(.networkConnectionLost))
        #expect(await harness.events() == [.opened(nil), .pong(1), .pingFailed(2), .ended(.receiveFailed)])
    }

    @Test func aPingCompletionThatNeverRunsFailsOnceAtTheEndAndALateOneChangesNothing() async {
        let harness = Harness()
        let task = harness.task
        task.open()
        harness.connection.sendPing(id: 7)
        task.complete(error: URLError(.networkConnectionLost))
        #expect(await harness.events() == [.opened(nil), .pingFailed(7), .ended(.receiveFailed)])
        task.completePing(0)  // the platform wakes up after the end
        #expect(task.count(.invalidateSession) == 1)
    }

    @Test func aPingAfterTheEndIsNotSent() async {
        let harness = Harness()
        harness.task.complete(error: URLError(.cannotConnectToHost))
        #expect(await harness.events() == [.ended(.connectFailed(.refused))])
        harness.connection.sendPing(id: 3)
        #expect(harness.task.count(.sendPing) == 0)
    }

    // MARK: Close codes

    @Test func everyCloseCodeTheClientSendsReachesTheTaskUnchanged() {
        for code in UInt16(1000)...4999 {
            let harness = Harness()
            harness.task.open()
            harness.connection.close(code: code, reason: "bye")
            #expect(harness.task.calls.last == .cancel(code: code, reason: Data("bye".utf8)))
        }
    }

    @Test func everyCloseCodeThePeerSendsIsReportedUnchanged() async {
        // 1005, 1006 and 1015 never appear in a close frame (RFC 6455 §7.4.1).
        for code in 1000...4999 where ![1005, 1006, 1015].contains(code) {
            let harness = Harness()
            harness.task.open()
            harness.task.peerClosed(code: code, reason: Data("done".utf8))
            harness.task.complete()
            #expect(await harness.events() == [.opened(nil), .ended(.peerClosed(code: UInt16(code)))])
        }
    }

    @Test func aPeerCloseWithoutACodeIsReportedWithoutOne() async {
        let harness = Harness()
        harness.task.open()
        harness.task.peerClosed(code: 1005)
        harness.task.complete()
        #expect(await harness.events() == [.opened(nil), .ended(.peerClosed(code: nil))])
    }

    @Test func aLongCloseReasonIsCutToFitTheFrameBetweenTwoCharacters() {
        let harness = Harness()
        harness.task.open()
        harness.connection.close(code: 1000, reason: String(repeating: "é", count: 100))  // 200 bytes
        guard case .cancel(_, let reason)? = harness.task.calls.last else {
            Issue.record("no close sent: \(harness.task.calls)")
            return
        }
        #expect(reason.count == 122)
        #expect(String(data: reason, encoding: .utf8) == String(repeating: "é", count: 61))
    }

    @Test func aSecondCloseSendsNothingMore() async {
        let harness = Harness()
        harness.task.open()
        harness.connection.close(code: 1001, reason: "")
        harness.connection.close(code: 1000, reason: "")
        #expect(harness.task.sentCloseCodes == [1001])
        harness.task.complete()
        #expect(await harness.events() == [.opened(nil), .ended(.closedLocally)])
    }

    // MARK: Teardown

    @Test func theCloseTimeoutRunsOnTheInjectedClock() async {
        // An hour: on a real clock the events below would not end within the guard's 10 s.
        let hour = 3_600_000
        let harness = Harness(closeTimeout: hour)
        let task = harness.task
        task.open()
        harness.connection.close(code: 1000, reason: "bye")
        #expect(task.sentCloseCodes == [1000])
        harness.clock.advance(toMilliseconds: hour - 1)
        #expect(task.deliver(.string("before the timeout")))  // still open one millisecond before
        harness.clock.advance(toMilliseconds: hour)
        #expect(await harness.events() == [
            .opened(nil), .text("before the timeout"), .ended(.closedLocally),
        ])
        #expect(task.count(.invalidateSession) == 1)
        task.complete(error: URLError(.cancelled))  // the invalidated session's own completion, after the end
        #expect(task.count(.invalidateSession) == 1)
    }

    @Test func aCloseAnsweredInTimeEndsAtOnceAndTheTimeoutChangesNothing() async {
        let harness = Harness()
        let task = harness.task
        task.open()
        harness.connection.close(code: 4000, reason: "")
        task.peerClosed(code: 4000)
        task.complete()
        #expect(await harness.events() == [.opened(nil), .ended(.closedLocally)])
        harness.clock.advance(toMilliseconds: 2_000)
        #expect(task.count(.invalidateSession) == 1)
    }

    @Test func waitUntilCloseSentReturnsOnceTheTaskEnded() async {
        let harness = Harness()
        harness.task.open()
        harness.connection.close(code: 1000, reason: "")
        let connection = harness.connection
        let waiter = Task { await connection.waitUntilCloseSent() }
        harness.task.complete()
        await waiter.value
        #expect(await harness.events() == [.opened(nil), .ended(.closedLocally)])
    }

    @Test func theSessionIsInvalidatedOnceWhicheverWayTheConnectionEnds() async {
        let ends: [(String, @Sendable (Harness) -> Void)] = [
            ("peer closed", { $0.task.peerClosed(code: 1000); $0.task.complete() }),
            ("TCP lost", { $0.task.complete(error: URLError(.networkConnectionLost)) }),
            ("closed locally", { $0.connection.close(code: 1000, reason: ""); $0.task.complete() }),
            ("close timed out", { $0.connection.close(code: 1000, reason: ""); $0.clock.advance(by: .seconds(2)) }),
        ]
        for (name, end) in ends {
            let harness = Harness()
            harness.task.open()
            end(harness)
            #expect(await harness.events() != nil, "\(name)")
            harness.task.complete(error: URLError(.cancelled))
            #expect(harness.task.count(.invalidateSession) == 1, "\(name)")
            #expect(harness.task.calls.last == .invalidateSession, "\(name): nothing asked of the task after")
        }
    }

    @Test func callbacksAfterTheEndAreIgnored() async {
        let harness = Harness()
        let task = harness.task
        let connection = harness.connection
        task.open()
        task.peerClosed(code: 1000)
        task.complete()
        // Late: a second open, close and completion, and the receive that was pending.
        task.open(subprotocol: "late")
        task.peerClosed(code: 4000)
        task.complete(error: URLError(.networkConnectionLost))
        #expect(task.deliver(.string("late")))
        connection.close(code: 1000, reason: "")
        #expect(await harness.events() == [.opened(nil), .ended(.peerClosed(code: 1000))])
        #expect(task.calls == [.setMaximumMessageSize(16 << 20), .resume, .receive, .invalidateSession])
        await #expect(throws: WebSocketSendError.notOpen) {
            try await connection.send(.text("too late"))
        }
    }

    // MARK: Sending

    @Test func sendReachesTheTaskOnlyWhileOpen() async throws {
        let harness = Harness()
        let connection = harness.connection
        await #expect(throws: WebSocketSendError.notOpen) {
            try await connection.send(.text("early"))
        }
        harness.task.open()
        try await connection.send(.text("hi"))
        try await connection.send(.binary(Data(count: 3)))
        #expect(harness.task.calls.suffix(2) == [.send("text:hi"), .send("binary:3")])
    }
}
