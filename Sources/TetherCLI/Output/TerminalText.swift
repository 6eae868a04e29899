/// Text from the network made safe to print on a terminal.
enum TerminalText {
    /// `text` with every control character written as `\u{XX}` (two uppercase hex digits): the C0 controls
    /// U+0000–U+001F (tab and line feed included, so that one message stays one line), DEL U+007F and the C1
    /// controls U+0080–U+009F. A peer can then neither move the cursor, clear the screen, set the window title
    /// nor start any other escape sequence (ESC is U+001B, CSI also U+009B). Everything else is unchanged.
    static func escaped(_ text: String) -> String {
        guard self.containsControl(text) else { return text }
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count + 16)
        for scalar in text.unicodeScalars {
            if self.isControl(scalar.value) {
                let hex = String(scalar.value, radix: 16, uppercase: true)
                escaped += "\\u{" + (hex.count < 2 ? "0" + hex : hex) + "}"
            } else {
                escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }

    static func isControl(_ value: UInt32) -> Bool {
        value < 0x20 || (0x7F...0x9F).contains(value)
    }

    /// Scans the UTF-8 bytes: a busy feed of plain text is printed without being copied.
    private static func containsControl(_ text: String) -> Bool {
        var previous: UInt8 = 0
        for byte in text.utf8 {
            // C0 and DEL are single bytes; a C1 control U+0080–U+009F is encoded C2 80 ... C2 9F.
            if byte < 0x20 || byte == 0x7F || (previous == 0xC2 && byte >= 0x80 && byte <= 0x9F) { return true }
            previous = byte
        }
        return false
    }
}
