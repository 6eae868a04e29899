/// Why a test-kit helper gave up.
public enum TetherTestingError: Error, Equatable, Sendable {
    /// What the helper waited for (named) did not happen within its timeout.
    case timedOut(String)
}
