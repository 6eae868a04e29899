import Foundation
import Tether

/// Options of `tether check`.
package struct CheckOptions: Equatable, Sendable {
    /// Where `tether-report.json` and `tether-report.html` go. Default: the current directory.
    package var outputDirectory: String = "."
    /// Run only this scenario. Default: all.
    package var only: String?
    /// Leave these scenarios out (`--skip`, repeatable). Default: none.
    package var skip: [String] = []
    /// Print a machine-readable summary on stdout instead of the table.
    package var json = false

    package init(outputDirectory: String = ".", only: String? = nil, skip: [String] = [], json: Bool = false) {
        self.outputDirectory = outputDirectory
        self.only = only
        self.skip = skip
        self.json = json
    }
}
