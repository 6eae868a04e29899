import Testing
import Tether
import TetherCore
@testable import TetherCLI

@Suite struct StatusLineTests {
    static func state(expensive: Bool, constrained: Bool) -> ConnectionState {
        ConnectionState(
            phase: .open, generation: 2, attempts: 0, retryAt: nil, failure: nil, lastRTT: 12, path: .available,
            connectivity: .online, pathIsExpensive: expensive, pathIsConstrained: constrained)
    }

    @Test func aMeteredOrLowDataPathIsShownNextToThePath() async {
        let captured = CapturedIO()
        let output = OutputQueue(io: captured.io)
        let status = StatusLine(output: output, errorIsTerminal: false, url: "ws://example.test/feed")
        #expect(status.line(for: Self.state(expensive: false, constrained: false))
            == "ws://example.test/feed open gen=2 rtt=12ms attempt=0 path=available net=online")
        #expect(status.line(for: Self.state(expensive: true, constrained: false)).contains(" path=available+expensive "))
        #expect(status.line(for: Self.state(expensive: true, constrained: true))
            .contains(" path=available+expensive+constrained "))
        #expect(status.line(for: Self.state(expensive: false, constrained: true)).contains(" path=available+constrained "))
        await output.finish()
    }

    @Test func aHandoverShowsItsOverlapUntilTheOldConnectionCloses() async {
        let captured = CapturedIO()
        let output = OutputQueue(io: captured.io)
        let status = StatusLine(output: output, errorIsTerminal: false, url: "ws://example.test/feed")
        await status.update(Self.state(expensive: false, constrained: false))
        func record(_ generation: Int, _ event: LogRecord.Event) -> LogRecord {
            LogRecord(generation: generation, time: 0, from: .open, to: .open, event: event)
        }
        await status.update(handover: record(3, .handover(.opening)))
        await status.update(handover: record(3, .handover(.moved)))
        await status.update(handover: record(3, .closed(reason: .peerClosed(code: 1000), code: 1000)))  // not the old
        await status.update(handover: record(2, .closed(reason: .handedOver, code: 1001)))
        await output.finish()
        let lines = captured.error.split(separator: "\n").map(String.init)
        #expect(lines.count == 4)
        #expect(lines.dropFirst().first?.hasSuffix(" handover=opening:gen3]") == true)
        #expect(lines.dropFirst(2).first?.hasSuffix(" handover=moved:gen3]") == true)
        #expect(lines.last?.contains("handover") == false)
    }
}
