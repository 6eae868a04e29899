import Synchronization
import TetherCLI

/// What a terminal would show of a command's stdout and stderr written to it, for the escape sequences
/// `tether connect` uses (`\r`, `\n`, `ESC [2K` erase the line, `ESC [1A` up one line): the rows, top first.
/// Anything else is text. (The real terminal is tested with tmux, in `ConnectTerminalTests`.)
final class TerminalScreen: Sendable {
    private struct State {
        var rows: [[Character]] = [[]]
        var row = 0
        var column = 0
    }

    private let state = Mutex(State())

    /// Both streams, written to this screen in the order the command writes them.
    var io: CommandIO {
        CommandIO(write: { self.write($0) }, writeError: { self.write($0) }, errorIsTerminal: true)
    }

    var rows: [String] {
        self.state.withLock { state in
            var rows = state.rows.map { String($0) }
            while rows.count > 1, rows.last == "" { rows.removeLast() }
            return rows
        }
    }

    func write(_ text: String) {
        self.state.withLock { state in
            var characters = Array(text)[...]
            while let character = characters.popFirst() {
                switch character {
                case "\r":
                    state.column = 0
                case "\n":
                    state.row += 1
                    state.column = 0
                    if state.row == state.rows.count { state.rows.append([]) }
                case "\u{1B}":
                    let sequence = String(characters.prefix(3))
                    if sequence == "[2K" {
                        state.rows[state.row] = []
                    } else if sequence == "[1A" {
                        state.row = max(0, state.row - 1)
                    }
                    characters = characters.dropFirst(3)
                default:
                    var line = state.rows[state.row]
                    while line.count < state.column { line.append(" ") }
                    if state.column < line.count {
                        line[state.column] = character
                    } else {
                        line.append(character)
                    }
                    state.rows[state.row] = line
                    state.column += 1
                }
            }
        }
    }
}
