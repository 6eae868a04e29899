import Testing
@testable import TetherCLI

@Suite struct TerminalTextTests {
    @Test func everyC0ControlDelAndC1ControlIsEscaped() {
        #expect(TerminalText.escaped("\u{1B}[2J") == #"\u{1B}[2J"#)
        #expect(TerminalText.escaped("a\u{0}b\tc\nd\re") == #"a\u{00}b\u{09}c\u{0A}d\u{0D}e"#)
        #expect(TerminalText.escaped("\u{7F}\u{80}\u{85}\u{9B}\u{9F}") == #"\u{7F}\u{80}\u{85}\u{9B}\u{9F}"#)
        let controls = (0..<0x20).map { Unicode.Scalar(UInt8($0)) } + (0x7F...0x9F).compactMap(Unicode.Scalar.init)
        let escaped = TerminalText.escaped(String(String.UnicodeScalarView(controls)))
        #expect(!escaped.unicodeScalars.contains { TerminalText.isControl($0.value) })
        #expect(escaped.count == controls.count * 6)
    }

    @Test func printableTextIsUnchangedWhateverItsScript() {
        let texts = ["", "plain ascii {\"json\": [1, 2]}", "back\\slash", "é ü ß", "\u{A0}\u{A1}", "日本語", "🙂👍🏽"]
        for text in texts {
            #expect(TerminalText.escaped(text) == text)
        }
        // Around a control character, the neighbouring multi-byte characters survive.
        #expect(TerminalText.escaped("é\u{1B}🙂") == #"é\u{1B}🙂"#)
    }
}
