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

    @Test func theSubprotocolTheServerChoseIsShownWhileOpen() async {
        let captured = CapturedIO()
        let output = OutputQueue(io: captured.io)
        let status = StatusLine(output: output, errorIsTerminal: false, url: "ws://example.test/feed")
        var state = Self.state(expensive: false, constrained: false)
        state.handshake = HandshakeResult(subprotocol: "chat.v2")
        #expect(status.line(for: state)
            == "ws://example.test/feed open gen=2 protocol=chat.v2 rtt=12ms attempt=0 path=available net=online")
        state.handshake = HandshakeResult()  // none chosen: nothing shown
        #expect(!status.line(for: state).contains("protocol="))
        await output.finish()
    }

    /// On a terminal with the user typing: received messages (marked `< `), errors and submitted lines (marked `> `)
    /// go above; the status line stays the last but one row and the line being typed the last, never overwritten.
    @Test func onATerminalTheStatusAndTheTypedLineStayBelowEverythingPrinted() async {
        let screen = TerminalScreen()
        let output = OutputQueue(io: screen.io)
        let status = StatusLine(
            output: output, errorIsTerminal: true, outputIsTerminal: true, interactive: true, url: "ws://h/")
        await status.update(Self.state(expensive: false, constrained: false))
        status.inputChanged("hel")
        await status.print("first reply\n")
        let open = "[ws://h/ open gen=2 rtt=12ms attempt=0 path=available net=online]"
        await output.waitUntilWritten()
        #expect(screen.rows == ["< first reply", open, "> hel"])
        status.inputChanged("hello")
        status.inputSubmitted("hello")
        await status.error("attempt failed: connect_failed (refused)\n")
        await status.update(rtt: 7)
        await status.print("hello\n")
        status.inputChanged("n")
        await output.waitUntilWritten()
        let updated = open.replacingOccurrences(of: "rtt=12ms", with: "rtt=7ms")
        #expect(screen.rows == [
            "< first reply", "> hello", "tether: attempt failed: connect_failed (refused)", "< hello", updated, "> n",
        ])
        status.finish()  // the last status stays; the line being typed goes
        await output.finish()
        #expect(screen.rows.suffix(2) == ["< hello", updated])
    }

    /// Lines are cut to the terminal's width, so that none wraps and the cursor knows where the status line is; the
    /// line being typed keeps its end.
    @Test func linesAreCutToTheTerminalsWidth() async {
        let screen = TerminalScreen()
        let output = OutputQueue(io: screen.io)
        let status = StatusLine(
            output: output, errorIsTerminal: true, interactive: true, url: "ws://h/", columns: { 20 })
        await status.update(Self.state(expensive: false, constrained: false))
        status.inputChanged("a long line being typed")
        await output.finish()
        #expect(screen.rows == ["[ws://h/ open gen=…", "> …line being typed"])
    }

    @Test func theRetryIsCountedDownInWholeSeconds() {
        #expect(StatusLine.countdown(.milliseconds(4300)) == "5s")
        #expect(StatusLine.countdown(.milliseconds(4000)) == "4s")
        #expect(StatusLine.countdown(.microseconds(999_500)) == "1s")
        #expect(StatusLine.countdown(.milliseconds(250)) == "250ms")
        #expect(StatusLine.countdown(.milliseconds(-5)) == "0ms")
    }

    /// A refusal of the credentials is shown as one, with its status, when the session stopped on it.
    @Test func aRefusedCredentialIsNotAnUnreachableServer() {
        var state = ConnectionState(
            phase: .failed, generation: 1, attempts: 0, retryAt: nil, failure: .handshakeRejected(status: 403),
            lastRTT: nil, path: .available, connectivity: .serverUnreachable(.authFailure))
        #expect(StatusLine.network(state) == "auth_failure:403")
        state.connectivity = .serverUnreachable(.rejected(status: 404))
        #expect(StatusLine.network(state) == "rejected:404")
        state.connectivity = .serverUnreachable(.timeout)
        #expect(StatusLine.network(state) == "server_unreachable:timeout")
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
