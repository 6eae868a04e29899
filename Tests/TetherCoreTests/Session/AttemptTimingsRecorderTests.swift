import Testing
@testable import TetherCore

/// The steps of an attempt as a transport marks them, and what a snapshot shows before they end.
@Suite struct AttemptTimingsRecorderTests {
    @Test func stepsEndedAreFinishedAndARunningOneIsTimedUpToTheSnapshot() {
        var recorder = AttemptTimingsRecorder()
        recorder.begin(.resolve, at: 0)
        recorder.end(.resolve, at: 4)
        recorder.connected([.init(address: "[::1]:80", start: 4, duration: 1, outcome: .connected)])
        recorder.begin(.tls, at: 5)
        #expect(recorder.snapshot(at: 30).tls == .init(start: 5, duration: 25, finished: false))
        recorder.end(.tls, at: 31)
        recorder.tlsCompleted(resumed: true)
        recorder.begin(.upgrade, at: 31)
        recorder.end(.upgrade, at: 33)
        let timings = recorder.snapshot(at: 90)
        #expect(timings == AttemptTimings(
            resolve: .init(start: 0, duration: 4),
            tcp: [.init(address: "[::1]:80", start: 4, duration: 1, outcome: .connected)],
            tls: .init(start: 5, duration: 26), tlsHandshake: .resumed, upgrade: .init(start: 31, duration: 2)))
        #expect(timings.elapsed == 33)
        #expect(timings.tcp.first?.family == "ipv6")
    }

    @Test func anEndWithoutABeginAndARedirectLeaveOnlyTheNextHopsSteps() {
        var recorder = AttemptTimingsRecorder()
        recorder.end(.proxy, at: 3)
        #expect(recorder.snapshot(at: 3) == AttemptTimings())
        recorder.begin(.resolve, at: 0)
        recorder.end(.resolve, at: 1)
        recorder.begin(.upgrade, at: 2)
        recorder.redirected()
        recorder.begin(.resolve, at: 9)
        #expect(recorder.snapshot(at: 10) == AttemptTimings(resolve: .init(start: 9, duration: 1, finished: false)))
    }

    @Test func fieldsAndDescriptionNameEachStepInOrderAndAnUnfinishedOneAsSuch() {
        let timings = AttemptTimings(
            resolve: .init(start: 0, duration: 2),
            tcp: [
                .init(address: "[2001:db8::2]:443", start: 2, duration: 250, outcome: .abandoned),
                .init(address: "192.0.2.2:443", start: 252, duration: 3, outcome: .failed(.refused)),
            ],
            proxy: .init(start: 255, duration: 4), tls: .init(start: 259, duration: 5_000, finished: false))
        #expect(timings.fields.map(\.name) == ["resolve_ms", "tcp", "proxy_ms", "tls_unfinished_ms"])
        #expect(timings.fields.map(\.value.description) == [
            "2", "[2001:db8::2]:443 +2 250ms abandoned, 192.0.2.2:443 +252 3ms refused", "4", "5000",
        ])
        #expect(timings.description == "resolve +0 2ms, tcp [[2001:db8::2]:443 +2 250ms abandoned, "
            + "192.0.2.2:443 +252 3ms refused], proxy +255 4ms, tls +259 5000ms unfinished")
    }
}
