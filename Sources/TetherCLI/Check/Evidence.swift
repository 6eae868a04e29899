import TetherCore

/// One piece of evidence: a measured value worth showing (close reason, code, timings).
package struct Evidence: Equatable, Sendable {
    package var key: String
    package var value: String

    package init(key: String, value: String) {
        self.key = key
        self.value = value
    }
}
