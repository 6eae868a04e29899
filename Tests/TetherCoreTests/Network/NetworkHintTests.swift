import Testing
import TetherCore

/// The assertion block of the original network-hint specification (docs/ARCHITECTURE.md §6), verbatim.
@Suite struct NetworkHintTests {
    @Test func seedAssertionBlockPassesUnchanged() {
        var hint = NetworkHint()
        precondition(hint.state == .unknown)

        let old = hint.restart()
        hint.accept(generation: old, state: .available, expensive: true)
        precondition(hint.state == .available && hint.expensive)

        let current = hint.restart()
        hint.accept(generation: old, state: .unavailable)
        precondition(hint.state == .unknown)

        hint.accept(generation: current, state: .needsConnection)
        precondition(hint.state == .needsConnection)

        hint.accept(generation: current, state: .available, constrained: true)
        precondition(hint.constrained && !hint.expensive)

        hint.accept(generation: current, state: .unavailable)
        precondition(hint.state == .unavailable)

        hint.accept(generation: current, state: .available)
        precondition(hint.state == .available && !hint.constrained)
    }
}
