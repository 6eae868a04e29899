/// Why a scenario could not finish its steps.
enum CheckFailure: Error, Equatable, CustomStringConvertible {
    /// A wait's condition never held.
    case timedOut(String)
    /// The embedded server could not start, or another setup step failed.
    case setup(String)

    var description: String {
        switch self {
        case .timedOut(let what): "timed out waiting for \(what)"
        case .setup(let what): "setup failed: \(what)"
        }
    }
}
