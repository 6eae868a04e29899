#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// A terminal switched to non-canonical input without echo, and back: `tether connect` reads keys itself
/// (`LineEditing`) while the terminal still turns Ctrl-C into SIGINT and Ctrl-Z into SIGTSTP (`ISIG` stays on).
final class TerminalMode: Sendable {
    private let descriptor: Int32
    /// The settings to restore; nil once restored.
    private let saved: Mutex<termios?>

    /// Switches `descriptor` to key-by-key input without echo.
    /// - Returns: nil when it is not a terminal (or its settings cannot be read or changed).
    init?(rawInput descriptor: Int32) {
        var settings = termios()
        guard isatty(descriptor) == 1, tcgetattr(descriptor, &settings) == 0 else { return nil }
        let original = settings
        settings.c_lflag &= ~tcflag_t(ICANON | ECHO)
        withUnsafeMutableBytes(of: &settings.c_cc) { controls in
            controls[Int(VMIN)] = 1  // a read returns as soon as one byte is there
            controls[Int(VTIME)] = 0
        }
        guard tcsetattr(descriptor, TCSANOW, &settings) == 0 else { return nil }
        self.descriptor = descriptor
        self.saved = Mutex(original)
    }

    /// Puts the terminal back as it was. Later calls do nothing.
    func restore() {
        guard var original = self.saved.withLock({ saved -> termios? in
            defer { saved = nil }
            return saved
        }) else { return }
        _ = tcsetattr(self.descriptor, TCSANOW, &original)
    }

    /// The terminal's width in columns, or 80 when it cannot say.
    static func columns(of descriptor: Int32) -> Int {
        var size = winsize()
        // A pointer argument, which both Glibc's and Darwin's (variadic) `ioctl` take.
        let got = withUnsafeMutablePointer(to: &size) { ioctl(descriptor, UInt(TIOCGWINSZ), $0) }
        guard got == 0, size.ws_col > 0 else { return 80 }
        return Int(size.ws_col)
    }
}
