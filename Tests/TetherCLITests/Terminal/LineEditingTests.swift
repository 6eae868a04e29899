import Testing
@testable import TetherCLI

@Suite struct LineEditingTests {
    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test func typedTextIsShownAndEnterSubmitsIt() {
        var editing = LineEditing()
        #expect(editing.feed(Self.bytes("hel")) == [.changed("hel")])
        #expect(editing.feed(Self.bytes("lo\r")) == [.submitted("hello")])
        #expect(editing.text == "")
        // Several lines in one read (a paste), each submitted, the rest shown.
        #expect(editing.feed(Self.bytes("a\nb\rc")) == [.submitted("a"), .submitted("b"), .changed("c")])
    }

    @Test func backspaceRemovesAWholeCharacterAndControlKeysEdit() {
        var editing = LineEditing()
        #expect(editing.feed(Self.bytes("caf\u{E9}")) == [.changed("caf\u{E9}")])
        #expect(editing.feed([0x7F]) == [.changed("caf")])  // both bytes of é
        #expect(editing.feed([0x08, 0x08]) == [.changed("c")])
        #expect(editing.feed(Self.bytes("at on mat")) == [.changed("cat on mat")])
        #expect(editing.feed([0x17]) == [.changed("cat on ")])  // Ctrl-W: the last word
        #expect(editing.feed([0x15]) == [.changed("")])  // Ctrl-U: the whole line
        #expect(editing.feed([0x7F]) == [])  // nothing to remove
    }

    /// A UTF-8 character split across two reads is shown once complete.
    @Test func aCharacterSplitAcrossReadsIsKept() {
        var editing = LineEditing()
        let euro = Self.bytes("\u{20AC}")
        _ = editing.feed(euro.prefix(2))
        #expect(editing.feed(euro.suffix(1) + [0x0D]) == [.submitted("\u{20AC}")])
    }

    @Test func escapeSequencesAndOtherControlsAreIgnored() {
        var editing = LineEditing()
        // Up arrow (CSI A), F1 (SS3 P), Page Up (CSI 5 ~), Alt+x, a bell and a NUL.
        let keys: [UInt8] = [0x1B, 0x5B, 0x41, 0x1B, 0x4F, 0x50, 0x1B, 0x5B, 0x35, 0x7E, 0x1B, 0x78, 0x07, 0x00]
        #expect(editing.feed(keys + Self.bytes("ok\t!")) == [.changed("ok\t!")])
    }

    @Test func ctrlDOnAnEmptyLineEndsTheInputAndNothingAfterCounts() {
        var editing = LineEditing()
        #expect(editing.feed(Self.bytes("x") + [0x04]) == [.changed("x")])  // not on a line with text
        #expect(editing.feed([0x15, 0x04] + Self.bytes("late\r")) == [.ended])
        #expect(editing.hasEnded)
    }

    /// A line stops growing at its limit (a paste without a newline), and Enter still submits what it holds.
    @Test func aLineIsBounded() {
        var editing = LineEditing(limit: 4)
        #expect(editing.feed(Self.bytes("abcdefgh\r")) == [.submitted("abcd")])
    }
}
