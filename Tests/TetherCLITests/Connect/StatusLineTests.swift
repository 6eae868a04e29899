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
}
