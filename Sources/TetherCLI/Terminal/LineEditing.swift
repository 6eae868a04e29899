/// The line a user types on a terminal in non-canonical mode, key by key: what `tether connect` does itself so that
/// it can draw the line below its status line and redraw it after every message, instead of leaving the echo to the
/// terminal (which writes it wherever the cursor is: on the status line, between received messages).
///
/// Bytes in, events out: printable text (UTF-8, any split) goes into the line; Enter (CR or LF) submits it;
/// Backspace (DEL or BS) removes the last character, Ctrl-U the whole line, Ctrl-W the last word; Ctrl-D on an
/// empty line ends the input. Escape sequences (arrow keys, function keys) and other control characters are
/// ignored. A line holds at most `limit` bytes: keys past it are dropped until Enter, so that a paste without a
/// newline cannot grow memory.
struct LineEditing {
    enum Event: Equatable {
        /// The line being typed changed; the text so far.
        case changed(String)
        /// Enter: the line is complete (and the new one is empty).
        case submitted(String)
        /// Ctrl-D on an empty line: no more input.
        case ended
    }

    /// Bytes at most in one line: the largest message `tether connect` takes from a terminal. Default 64 KiB.
    let limit: Int
    private var line: [UInt8] = []
    private var escape = EscapeState.none
    private(set) var hasEnded = false

    private enum EscapeState {
        case none
        /// After ESC.
        case started
        /// Inside `ESC [` (CSI) or `ESC O` (SS3): until a final byte.
        case sequence(finalOnly: Bool)
    }

    init(limit: Int = 64 << 10) {
        self.limit = limit
    }

    /// The text typed so far, as it is shown (bytes of an incomplete UTF-8 sequence are not shown yet).
    var text: String { String(decoding: self.line, as: UTF8.self) }

    /// Takes the bytes of one read.
    /// - Returns: what they did, in order; one `.changed` at most per run of edits between two submissions.
    mutating func feed(_ bytes: some Sequence<UInt8>) -> [Event] {
        var events: [Event] = []
        var changed = false
        for byte in bytes where !self.hasEnded {
            switch self.take(byte) {
            case .changed: changed = true
            case .submitted(let line):
                events.append(.submitted(line))
                changed = false
            case .ended:
                events.append(.ended)
                changed = false
            case nil: break
            }
        }
        if changed { events.append(.changed(self.text)) }
        return events
    }

    private mutating func take(_ byte: UInt8) -> Event? {
        switch self.escape {
        case .started:
            // `ESC [` and `ESC O` start a sequence; `ESC` and another key is Alt+key: dropped with it.
            self.escape = byte == UInt8(ascii: "[") ? .sequence(finalOnly: false)
                : byte == UInt8(ascii: "O") ? .sequence(finalOnly: true) : .none
            return nil
        case .sequence(let finalOnly):
            // A CSI ends at its final byte (0x40–0x7E); an SS3 is one byte.
            if finalOnly || (0x40...0x7E).contains(byte) { self.escape = .none }
            return nil
        case .none:
            break
        }
        switch byte {
        case 0x0D, 0x0A:
            defer { self.line.removeAll() }
            return .submitted(self.text)
        case 0x7F, 0x08:
            guard !self.line.isEmpty else { return nil }
            self.removeLastCharacter()
            return .changed(self.text)
        case 0x15:  // Ctrl-U
            self.line.removeAll()
            return .changed("")
        case 0x17:  // Ctrl-W: spaces, then the word before them
            while self.line.last == UInt8(ascii: " ") { self.line.removeLast() }
            while let last = self.line.last, last != UInt8(ascii: " ") { self.line.removeLast() }
            return .changed(self.text)
        case 0x04:  // Ctrl-D
            guard self.line.isEmpty else { return nil }
            self.hasEnded = true
            return .ended
        case 0x1B:
            self.escape = .started
            return nil
        case 0x09:  // a tab is text
            return self.append(byte)
        case 0x00..<0x20:
            return nil
        default:
            return self.append(byte)
        }
    }

    private mutating func append(_ byte: UInt8) -> Event? {
        guard self.line.count < self.limit else { return nil }
        self.line.append(byte)
        return .changed(self.text)
    }

    /// Removes the last character: its UTF-8 continuation bytes and its lead byte.
    private mutating func removeLastCharacter() {
        while let last = self.line.popLast(), last & 0xC0 == 0x80 {}
    }
}
