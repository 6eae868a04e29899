#if os(Linux)
import Foundation
import Testing
import TetherTestServer

/// `tether connect` in a real terminal (tmux), as a person uses it: what the screen shows while they type and
/// messages arrive, the retry counted down, a reply to piped input, and the terminal as it was afterwards.
@Suite(.enabled(if: Tmux.executable != nil && ConnectProcessTests.binary != nil, Comment(rawValue: Tmux.missing)))
struct ConnectTerminalTests {
    static var tether: String { ConnectProcessTests.binary?.path ?? "tether" }

    /// Messages arrive (a broadcast every 100 ms) while the user types: they appear above, marked `< `, the status
    /// line stays below them and the line being typed below it, never overwritten. Enter sends it (`> abc` stays in
    /// the transcript, the echo comes back as `< abc`); Ctrl-C ends the command with 0 and the terminal as it was.
    @Test func typedInputStaysBelowTheStatusLineWhileMessagesArrive() async throws {
        var scenario = Scenario.echo
        scenario.broadcast = Scenario.Broadcast(intervalMilliseconds: 100)
        let server = try TestServer(scenario: scenario)
        let terminal = try Tmux("\(Self.tether) connect \(server.url()) --no-path-monitor")
        defer { terminal.stop() }
        #expect(await terminal.waitFor(" open gen=1 "))
        try terminal.type("abc")
        #expect(await terminal.waitFor("> abc"))
        let typed = terminal.writtenCount
        #expect(await terminal.waitFor("< ", after: typed))  // a message arrived after the typing
        #expect(await terminal.waitFor("> abc", after: typed))  // and the line being typed was drawn again
        var screen = try terminal.screen()
        #expect(screen.last == "> abc", "\(screen)")
        #expect(screen.dropLast().last?.hasPrefix("[\(server.url()) open gen=1 ") == true, "\(screen)")
        #expect(screen.dropLast(2).contains { $0.hasPrefix("< ") }, "\(screen)")
        #expect(!screen.dropLast().contains { $0.contains("abc") }, "typed text elsewhere: \(screen)")

        try terminal.press("Enter")
        #expect(await terminal.waitFor("< abc"))
        screen = try terminal.screen()
        #expect(screen.contains("> abc") && screen.contains("< abc"), "\(screen)")
        #expect(screen.last == ">", "\(screen)")  // the prompt alone (`screen()` drops trailing spaces)

        try terminal.press("C-c")
        #expect(await terminal.waitFor("[exit 0 tty same]"), "\(terminal.written)")
        await server.stop()
    }

    /// The retry is counted down on the status line, a redraw per second; Ctrl-C before any connection opened
    /// exits 130 and puts the terminal back.
    @Test func theRetryIsCountedDownAndCtrlCBeforeAnyConnectionExits130() async throws {
        let closed = try TestServer(scenario: .normal)
        let url = closed.url()
        await closed.stop()  // nothing listens there any more: each attempt is refused
        let terminal = try Tmux(
            "\(Self.tether) connect \(url) --backoff-base 3000 --backoff-cap 3000 --no-path-monitor")
        defer { terminal.stop() }
        // 3 s exactly (the cap absorbs the jitter): the line shows 3 s, then 2 s and 1 s left, a redraw each.
        #expect(await terminal.waitFor("next-retry=2s "), "\(terminal.written)")
        #expect(await terminal.waitFor("next-retry=1s "), "\(terminal.written)")
        let screen = try terminal.screen()
        // The status line stays the last but one row, below the failed attempts (a later attempt may have begun).
        #expect(screen.dropLast().last?.hasPrefix("[\(url) ") == true, "\(screen)")
        #expect(screen.contains { $0.hasPrefix("tether: attempt failed: connect_failed (refused") }, "\(screen)")
        try terminal.press("C-c")
        #expect(await terminal.waitFor("[exit 130 tty same]"), "\(terminal.written)")
        #expect(try terminal.screen().contains("tether: interrupted before any connection opened"))
    }

    /// `echo hi | tether connect URL` on a terminal: the reply is shown, marked as received, and the command ends.
    @Test func aReplyToPipedInputIsShownMarked() async throws {
        let server = try TestServer(scenario: .echo)
        let terminal = try Tmux("echo hi | \(Self.tether) connect \(server.url()) --no-path-monitor")
        defer { terminal.stop() }
        #expect(await terminal.waitFor("[exit 0 tty same]"), "\(terminal.written)")
        #expect(try terminal.screen().contains("< hi"))
        await server.stop()
    }
}
#endif
