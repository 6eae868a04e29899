import Foundation
import Tether

/// One `--header Name:Value`.
package struct HeaderOption: Equatable, Sendable {
    package var name: String
    package var value: String

    package init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}
